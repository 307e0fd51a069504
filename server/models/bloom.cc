// BLOOM (model_type "bloom"): transformers' BloomModel and BloomForCausalLM
// (modeling_bloom.py, 4.51.3): a LayerNorm right after the word embeddings,
// biased fused attention and MLP of 4 * hidden, lm_head tied by default.

#include <optional>
#include <string>

#include "common/status_macros.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/layers.h"
#include "server/models/tp_shard.h"

namespace chunkplan::models {
namespace {

// BloomBlock: input_layernorm, self_attention (query_key_value, dense),
// post_attention_layernorm, mlp (dense_h_to_4h, dense_4h_to_h); all biased.
// Its forward runs them in that order (F.layer_norm(x, weight, bias),
// F.linear(x, weight, bias)): one operation each.
void Block(ParamBuilder& b, uint64_t h, uint64_t qkv, uint64_t inner) {
  LayerNorm(b, "input_layernorm", h);
  b.In("self_attention", [&] {
    Linear(b, "query_key_value", h, qkv, /*bias=*/true);
    Linear(b, "dense", h, h, /*bias=*/true);
  });
  LayerNorm(b, "post_attention_layernorm", h);
  b.In("mlp", [&] {
    Linear(b, "dense_h_to_4h", h, inner, /*bias=*/true);
    Linear(b, "dense_4h_to_h", inner, h, /*bias=*/true);
  });
  for (absl::string_view op :
       {"input_layernorm", "self_attention.query_key_value",
        "self_attention.dense", "post_attention_layernorm", "mlp.dense_h_to_4h",
        "mlp.dense_4h_to_h"}) {
    b.Op({op});
  }
}

// BloomBlock as the activation estimate models it (transformers 4.51.3):
// word_embeddings_layernorm, LayerNorm, the fused query_key_value whose q, k
// and v are reshaped strided views (baddbmm onto the ALiBi bias, bmm), an
// fp32 softmax, GeLUFunction (it saves its input; bloom_gelu_back), dropout
// where attention_dropout and hidden_dropout are not 0; eager only (no sdpa
// or flash_attention_2 path). pretraining_tp > 1 with slow_but_exact (the
// sliced F.linear loops) or a value of the wrong type leaves
// traits.not_estimated set with the reason.
void SetBloomTraits(const HfConfig& cfg, uint64_t head_dim, bool tied,
                    DecoderTraits& t) {
  t.head_dim = head_dim;
  t.norm = "layer_norm";
  t.gated_mlp = t.rotary = false;
  t.tied_embeddings = tied;
  t.fused_qkv = t.alibi = t.embedding_norm = t.bloom_gelu = true;
  t.no_sdpa = t.no_flash = true;
  const absl::StatusOr<bool> attn = cfg.NonZeroProbability("attention_dropout");
  const absl::StatusOr<bool> hidden = cfg.NonZeroProbability("hidden_dropout");
  const absl::StatusOr<std::optional<uint64_t>> tp =
      cfg.OptionalSize("pretraining_tp");
  const absl::StatusOr<bool> exact = cfg.Flag("slow_but_exact");
  for (const absl::Status& s :
       {attn.status(), hidden.status(), tp.status(), exact.status()}) {
    if (!s.ok()) {
      t.not_estimated = std::string(s.message());
      return;
    }
  }
  t.attention_dropout = *attn;
  t.hidden_dropout = *hidden;
  if (*exact && tp->value_or(1) > 1) {
    t.not_estimated =
        "slow_but_exact true with pretraining_tp > 1 (the sliced F.linear "
        "loops) is not modelled";
  } else {
    t.not_estimated.clear();
  }
}

absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  // BloomConfig takes the legacy n_embed (BLOOM's published configs carry
  // it) over hidden_size.
  const absl::string_view width_key =
      cfg.Has("n_embed") ? "n_embed" : "hidden_size";
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t h, cfg.Size(width_key));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t heads, cfg.Size("n_head"));
  CHUNKPLAN_RETURN_IF_ERROR(Divide(h, heads, "hidden_size / n_head").status());
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t qkv, Product({3, h}, "3 * hidden_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t inner,
                             Product({4, h}, "4 * hidden_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t vocab, cfg.Size("vocab_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t layers, cfg.Size("n_layer"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      bool tied, OutputTied(cfg, architecture == "BloomForCausalLM"));
  d.hidden_size = h;
  d.decoder_only = true;
  d.num_layers = layers;
  d.num_attention_heads = d.num_key_value_heads = heads;
  d.intermediate_size = inner;
  d.vocab_size = vocab;
  SetBloomTraits(cfg, h / heads, tied, d.traits);
  const bool lm_head = architecture == "BloomForCausalLM";
  // BloomModel: word_embeddings, word_embeddings_layernorm, h, ln_f (forward
  // in that order).
  b.In(lm_head ? "transformer" : "", [&] {
    Embedding(b, "word_embeddings", vocab, h);
    LayerNorm(b, "word_embeddings_layernorm", h);
    b.Op({"word_embeddings"});
    b.Op({"word_embeddings_layernorm"});
    b.Repeat("h", layers, [&](uint64_t) { Block(b, h, qkv, inner); });
    LayerNorm(b, "ln_f", h);
    b.Op({"ln_f"});
  });
  // BloomForCausalLM: lm_head, unless tied to word_embeddings.
  if (lm_head && !tied) Linear(b, "lm_head", h, vocab, /*bias=*/false);
  if (lm_head) b.Op({tied ? "transformer.word_embeddings" : "lm_head"});
  return absl::OkStatus();
}

}  // namespace

// BloomConfig's defaults (configuration_bloom.py, 4.51.3: a tiny test
// shape), and PretrainedConfig's tie_word_embeddings.
const Family& BloomFamily() {
  // ColossalAI's BloomPolicy (shardformer/policies/bloom.py): the fused
  // query_key_value is a plain Linear1D_Col. Sequence parallelism runs on
  // every mesh: get_bloom_sequence_parallel_forward_fn splits the sequence
  // and gathers it over the tp group (modeling/bloom.py:1020-1068), so no
  // refusal; its split is modelled (activation_sp.h, measured against
  // tests/oracle/tp_bloom_sp_torch.py).
  // get_lm_forward_with_dist_cross_entropy (modeling/bloom.py:1095-1156):
  // 16-bit logits, the model's dtype for the loss; the ALiBi tensor of the
  // rank's heads (build_bloom_alibi_tensor).
  static const TpPolicy tp{
      .file = "bloom",
      .rules = FusedQkvTpRules(),
      .heads_key = "n_head",
      .causal_lm = {.modelled = true, .sp_modelled = true}};
  static const Family family{"bloom",
                             {"BloomForCausalLM", "BloomModel"},
                             R"({
        "vocab_size": 250880, "hidden_size": 64, "n_layer": 2, "n_head": 8,
        "tie_word_embeddings": true, "hidden_dropout": 0.0,
        "attention_dropout": 0.0, "pretraining_tp": 1,
        "slow_but_exact": false})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
