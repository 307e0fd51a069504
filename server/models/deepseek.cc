// DeepSeek-V2 and DeepSeek-V3: multi-head latent attention and DeepSeekMoE.
// DeepSeek-V3 (model_type "deepseek_v3") as transformers 4.51.3 builds it
// (modeling_deepseek_v3.py: DeepseekV3Model, DeepseekV3ForCausalLM);
// transformers 4.51.3 has no DeepSeek-V2, so "deepseek_v2" follows the
// model's own published remote code (modeling_deepseek.py and
// configuration_deepseek.py of deepseek-ai/DeepSeek-V2 and -V2-Lite:
// DeepseekV2Model, DeepseekV2ForCausalLM). The checkpoints' multi-token
// prediction layer (DeepSeek-V3's layer 61) is not part of either model.

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"
#include "server/models/layers.h"
#include "server/models/moe_layer.h"

namespace chunkplan::models {
namespace {

// The latent attention's sizes and the widths they give.
struct Latent {
  uint64_t heads = 0;
  std::optional<uint64_t> q_lora;  // unset: a plain q_proj
  uint64_t kv_lora = 0, rope = 0, v = 0;
  uint64_t q_width = 0;     // heads * (qk_nope_head_dim + qk_rope_head_dim)
  uint64_t kv_a_width = 0;  // kv_lora_rank + qk_rope_head_dim
  uint64_t kv_b_width = 0;  // heads * (qk_nope_head_dim + v_head_dim)
  uint64_t o_width = 0;     // heads * v_head_dim
  uint64_t head_dim = 0;    // qk_nope_head_dim + qk_rope_head_dim
  bool bias = false;        // attention_bias
};

// a + b; INVALID_ARGUMENT naming `what` past 2^64 - 1.
absl::StatusOr<uint64_t> Sum(uint64_t a, uint64_t b, absl::string_view what) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return absl::InvalidArgumentError(
        absl::StrCat("config ", what, ": passes 2^64 - 1"));
  }
  return sum;
}

absl::StatusOr<Latent> ReadLatent(const HfConfig& cfg) {
  Latent l;
  CHUNKPLAN_ASSIGN_OR_RETURN(l.heads, cfg.Size("num_attention_heads"));
  CHUNKPLAN_ASSIGN_OR_RETURN(l.q_lora, cfg.OptionalSize("q_lora_rank"));
  CHUNKPLAN_ASSIGN_OR_RETURN(l.kv_lora, cfg.Size("kv_lora_rank"));
  CHUNKPLAN_ASSIGN_OR_RETURN(l.rope, cfg.Size("qk_rope_head_dim"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t nope, cfg.Size("qk_nope_head_dim"));
  CHUNKPLAN_ASSIGN_OR_RETURN(l.v, cfg.Size("v_head_dim"));
  const uint64_t v = l.v;
  CHUNKPLAN_ASSIGN_OR_RETURN(l.bias, cfg.Flag("attention_bias"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      l.head_dim, Sum(nope, l.rope, "qk_nope_head_dim + qk_rope_head_dim"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      l.q_width, Product({l.heads, l.head_dim},
                         "num_attention_heads * (qk_nope_head_dim + "
                         "qk_rope_head_dim)"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      l.kv_a_width, Sum(l.kv_lora, l.rope, "kv_lora_rank + qk_rope_head_dim"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t nope_v,
                             Sum(nope, v, "qk_nope_head_dim + v_head_dim"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      l.kv_b_width,
      Product({l.heads, nope_v},
              "num_attention_heads * (qk_nope_head_dim + v_head_dim)"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      l.o_width, Product({l.heads, v}, "num_attention_heads * v_head_dim"));
  return l;
}

// self_attn: q_proj, or q_a_proj, q_a_layernorm, q_b_proj; then
// kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj. attention_bias
// biases q_a_proj, kv_a_proj_with_mqa and o_proj.
void LatentAttention(ParamBuilder& b, const Latent& l, uint64_t h) {
  b.In("self_attn", [&] {
    if (!l.q_lora) {
      Linear(b, "q_proj", h, l.q_width, /*bias=*/false);
    } else {
      Linear(b, "q_a_proj", h, *l.q_lora, l.bias);
      RmsNorm(b, "q_a_layernorm", *l.q_lora);
      Linear(b, "q_b_proj", *l.q_lora, l.q_width, /*bias=*/false);
    }
    Linear(b, "kv_a_proj_with_mqa", h, l.kv_a_width, l.bias);
    RmsNorm(b, "kv_a_layernorm", l.kv_lora);
    Linear(b, "kv_b_proj", l.kv_lora, l.kv_b_width, /*bias=*/false);
    Linear(b, "o_proj", l.o_width, h, l.bias);
  });
}

// Which layers hold the mixture, and its sizes (read only where some layer
// does, the dense width only where some layer is dense).
struct Moe {
  uint64_t layers = 0, first_dense = 0, freq = 1;
  uint64_t routed = 0;  // 0: no layer is sparse (V2's null n_routed_experts)
  uint64_t expert_inter = 0;
  std::optional<uint64_t> shared;  // n_shared_experts (V2: null is none)
  uint64_t shared_inter = 0;       // moe_intermediate_size * n_shared_experts

  bool Sparse(uint64_t layer) const {
    return routed > 0 && layer >= first_dense && layer % freq == 0;
  }
  // The first multiple of freq at or past first_dense is below layers.
  bool AnySparse() const {
    if (routed == 0 || first_dense >= layers) return false;
    const uint64_t first = first_dense + (freq - first_dense % freq) % freq;
    return first >= first_dense && first < layers;
  }
  // Layer 0 is dense unless it is sparse; else layer 1 is, where freq > 1.
  bool AnyDense() const { return !Sparse(0) || (layers > 1 && !Sparse(1)); }
};

// `v2`: n_routed_experts and n_shared_experts may be null, moe_layer_freq
// counts, and ep_size must be 1 (the remote code builds only one rank's
// experts otherwise). DeepSeek-V3 in transformers reads neither of the last
// two: every layer from first_k_dense_replace on is sparse.
absl::StatusOr<Moe> ReadMoe(const HfConfig& cfg, uint64_t layers, bool v2) {
  Moe moe;
  moe.layers = layers;
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.first_dense,
                             cfg.Count("first_k_dense_replace"));
  if (v2) {
    CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t ep_size, cfg.Size("ep_size"));
    if (ep_size != 1) {
      return cfg.Refuse("ep_size",
                        "only 1 is supported (the remote code "
                        "builds one rank's experts)");
    }
    CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> routed,
                               cfg.OptionalSize("n_routed_experts"));
    moe.routed = routed.value_or(0);
    if (moe.routed > 0) {
      CHUNKPLAN_ASSIGN_OR_RETURN(moe.freq, cfg.Size("moe_layer_freq"));
    }
  } else {
    CHUNKPLAN_ASSIGN_OR_RETURN(moe.routed, cfg.Size("n_routed_experts"));
  }
  if (!moe.AnySparse()) return moe;
  CHUNKPLAN_ASSIGN_OR_RETURN(moe.expert_inter,
                             cfg.Size("moe_intermediate_size"));
  if (v2) {
    CHUNKPLAN_ASSIGN_OR_RETURN(moe.shared,
                               cfg.OptionalSize("n_shared_experts"));
  } else {
    CHUNKPLAN_ASSIGN_OR_RETURN(moe.shared, cfg.Size("n_shared_experts"));
  }
  if (moe.shared) {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        moe.shared_inter, Product({moe.expert_inter, *moe.shared},
                                  "moe_intermediate_size * n_shared_experts"));
  }
  return moe;
}

// DeepseekV2MoE / DeepseekV3MoE: experts.<e>, gate (the router: its weight
// [n_routed_experts, hidden]; DeepSeek-V3's e_score_correction_bias is a
// buffer in transformers, not a parameter), shared_experts.
void SparseBlock(ParamBuilder& b, uint64_t h, const Moe& moe) {
  b.Repeat("experts", moe.routed,
           [&](uint64_t) { GatedMlp(b, h, moe.expert_inter, false); });
  b.Add("gate.weight", {moe.routed, h});
  if (moe.shared) {
    b.In("shared_experts",
         [&] { GatedMlp(b, h, moe.shared_inter, /*bias=*/false); });
  }
}

// Layer `layer`'s operations in DeepseekV3DecoderLayer.forward's order
// (4.51.3): input_layernorm; q_a_proj, q_a_layernorm, q_b_proj (or
// q_proj); kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj; o_proj;
// post_attention_layernorm; then the dense MLP's gate_proj, up_proj,
// down_proj, or DeepseekV3MoE's gate (the router), every routed expert in
// turn (one no token chose is skipped: the op sequence takes every expert
// as chosen, as b s k tokens against the experts make it) and
// shared_experts on the residual. DeepSeek-V2's remote code calls the same
// modules in the same order (DeepseekV2DecoderLayer.forward,
// DeepseekV2Attention.forward and its flash_attention_2 subclass alike;
// MoEGate's F.linear on `self.weight.type(torch.float32)`); its training
// branch of DeepseekV2MoE.forward runs every expert unconditionally
// (`for i, expert in enumerate(self.experts)`, one no token chose on an
// empty batch), then shared_experts where n_shared_experts is not null.
void LayerOps(ParamBuilder& b, const Latent& l, const Moe& moe,
              uint64_t layer) {
  b.Op({"input_layernorm"});
  if (l.q_lora) {
    for (const char* op : {"q_a_proj", "q_a_layernorm", "q_b_proj"}) {
      b.Op({absl::StrCat("self_attn.", op)});
    }
  } else {
    b.Op({"self_attn.q_proj"});
  }
  for (const char* op :
       {"kv_a_proj_with_mqa", "kv_a_layernorm", "kv_b_proj", "o_proj"}) {
    b.Op({absl::StrCat("self_attn.", op)});
  }
  b.Op({"post_attention_layernorm"});
  if (!moe.Sparse(layer)) return GatedMlpOps(b, "mlp");
  RouterAndExpertOps(b, moe.routed);
  if (moe.shared) GatedMlpOps(b, "mlp.shared_experts");
}

// The latent attention's sizes and the sparse block's (neither DeepSeek
// config has output_router_logits) as the activation traits take them.
void ModelLatentAndMoe(const HfConfig& cfg, const Latent& l, const Moe& moe,
                       uint64_t sparse_layers, ModelDescription& d) {
  DecoderTraits& t = d.traits;
  t.rotary_dim = t.qk_rope_head_dim = l.rope;
  t.q_lora_rank = l.q_lora.value_or(0);
  t.kv_lora_rank = l.kv_lora;
  t.v_head_dim = l.v;
  ModelSparseBlock(cfg,
                   {.layers = sparse_layers,
                    .experts = moe.routed,
                    .expert_inter = moe.expert_inter,
                    .shared_inter = moe.shared_inter,
                    .router_logits_key = false},
                   d);
}

// DeepSeek-V2's MoEGate options (the remote configuration_deepseek.py's
// defaults where unset): OK with t.router_groups and t.seq_aux set, or the
// reason the estimate refuses: a scoring_func other than "softmax" (the
// remote code raises), a topk_method other than "greedy" and
// "group_limited_greedy" (its default "gready" chooses nothing), an
// n_group not dividing the experts or a topk_group above it, an
// aux_loss_alpha not above 0 (the training forward then calls
// AddAuxiliaryLoss.apply(y, None), which fails), or a key that does not
// read.
absl::Status ReadMoeGate(const HfConfig& cfg, uint64_t experts,
                         DecoderTraits& t) {
  CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<std::string> scoring,
                             cfg.OptionalText("scoring_func"));
  if (scoring.value_or("softmax") != "softmax") {
    return absl::UnimplementedError(absl::StrCat(
        "scoring_func \"", *scoring, "\": MoEGate runs only \"softmax\""));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<std::string> method,
                             cfg.OptionalText("topk_method"));
  const std::string topk_method = method.value_or("gready");
  if (topk_method == "group_limited_greedy") {
    CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t groups, cfg.Size("n_group"));
    CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t topk_groups, cfg.Size("topk_group"));
    if (experts % groups != 0) {
      return absl::UnimplementedError(
          absl::StrCat("n_group ", groups, " does not divide n_routed_experts ",
                       experts, ": MoEGate's view of the scores fails"));
    }
    if (topk_groups > groups) {
      return absl::UnimplementedError(absl::StrCat("topk_group ", topk_groups,
                                                   " exceeds n_group ", groups,
                                                   ": torch.topk refuses it"));
    }
    t.router_groups = groups;
  } else if (topk_method != "greedy") {
    return absl::UnimplementedError(absl::StrCat(
        "topk_method \"", topk_method,
        "\" is neither \"greedy\" nor \"group_limited_greedy\": MoEGate "
        "chooses no experts"));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(double alpha, cfg.Number("aux_loss_alpha", 0.001));
  if (!(alpha > 0.0)) {
    return absl::UnimplementedError(
        "aux_loss_alpha not above 0: the remote code's training forward "
        "calls AddAuxiliaryLoss.apply(y, None), which fails");
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(t.seq_aux, cfg.Flag("seq_aux"));
  return absl::OkStatus();
}

// DeepSeek-V2's activation traits (docs/plan.md, "DeepSeek-V2"): LLaMA's
// norms and MLP, the latent attention's sizes (the remote attention gives
// k and v one head per query head, whatever num_key_value_heads says),
// each layer's own RoPE tables, the shifted fp32 loss, eager or
// flash_attention_2 only (no sdpa class), DeepseekV2MoE on the sparse
// layers with MoEGate's options (ReadMoeGate).
void ModelV2Layer(const HfConfig& cfg, const Latent& l, const Moe& moe,
                  uint64_t sparse_layers, ModelDescription& d) {
  ModelLlamaLayer(cfg, "silu", d);
  DecoderTraits& t = d.traits;
  if (!t.not_estimated.empty()) return;
  t.deepseek_v2 = t.fp32_logits = t.no_sdpa = true;
  ModelLatentAndMoe(cfg, l, moe, sparse_layers, d);
  if (!t.not_estimated.empty() || t.moe_layers == 0) return;
  if (absl::Status gate = ReadMoeGate(cfg, moe.routed, t); !gate.ok()) {
    t.not_estimated = std::string(gate.message());
  }
}

// DeepSeek-V3's activation traits (docs/plan.md, "DeepSeek-V3"): LLaMA's
// norms and MLP, the latent attention's sizes, DeepseekV3MoE on the
// sparse layers. UNIMPLEMENTED reasons name num_key_value_heads where it
// is not num_attention_heads (4.51.3's attention would repeat k and v past
// q's heads).
void ModelV3Layer(const HfConfig& cfg, const Latent& l, const Moe& moe,
                  uint64_t sparse_layers, ModelDescription& d) {
  ModelLlamaLayer(cfg, "silu", d);
  DecoderTraits& t = d.traits;
  if (!t.not_estimated.empty()) return;
  const absl::StatusOr<std::optional<uint64_t>> kv =
      cfg.OptionalSize("num_key_value_heads");
  if (!kv.ok()) {
    t.not_estimated = std::string(kv.status().message());
    return;
  }
  if (kv->has_value() && **kv != l.heads) {
    t.not_estimated = absl::StrCat(
        "num_key_value_heads ", **kv, " is not num_attention_heads ", l.heads,
        ": the latent attention's k and v have one head per query head");
    return;
  }
  ModelLatentAndMoe(cfg, l, moe, sparse_layers, d);
  t.deepseek_moe = t.moe_layers > 0;
}

// A layer is self_attn, mlp (sparse or dense), input_layernorm,
// post_attention_layernorm.
absl::Status BuildDeepseek(const HfConfig& cfg, absl::string_view architecture,
                           bool v2, ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(DecoderShape shape,
                             ReadDecoderShape(cfg, architecture));
  CHUNKPLAN_ASSIGN_OR_RETURN(Latent latent, ReadLatent(cfg));
  CHUNKPLAN_ASSIGN_OR_RETURN(Moe moe, ReadMoe(cfg, shape.layers, v2));
  uint64_t inter = moe.expert_inter;
  if (moe.AnyDense()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(inter, cfg.Size("intermediate_size"));
  }
  // The latent attention has as many key/value heads as heads.
  const HeadDims dims{.heads = latent.heads,
                      .kv_heads = latent.heads,
                      .head_dim = latent.head_dim,
                      .q_width = latent.q_width,
                      .kv_width = latent.q_width};
  SetDecoderFacts(shape, dims, inter, d);
  const uint64_t h = shape.hidden;
  CausalLm(
      b, architecture, shape,
      [&](uint64_t layer) {
        LatentAttention(b, latent, h);
        b.In("mlp", [&] {
          if (moe.Sparse(layer)) {
            SparseBlock(b, h, moe);
          } else {
            GatedMlp(b, h, inter, /*bias=*/false);
          }
        });
        Norms(b, h, {"input_layernorm", "post_attention_layernorm"});
        LayerOps(b, latent, moe, layer);
      },
      /*operations=*/true);
  if (!b.status().ok()) return absl::OkStatus();
  uint64_t sparse_layers = 0;
  for (uint64_t layer = 0; layer < shape.layers; ++layer) {
    sparse_layers += moe.Sparse(layer) ? 1 : 0;
  }
  if (v2) {
    ModelV2Layer(cfg, latent, moe, sparse_layers, d);
  } else {
    ModelV3Layer(cfg, latent, moe, sparse_layers, d);
  }
  return absl::OkStatus();
}

absl::Status BuildV2(const HfConfig& cfg, absl::string_view architecture,
                     ParamBuilder& b, ModelDescription& d) {
  return BuildDeepseek(cfg, architecture, /*v2=*/true, b, d);
}

absl::Status BuildV3(const HfConfig& cfg, absl::string_view architecture,
                     ParamBuilder& b, ModelDescription& d) {
  return BuildDeepseek(cfg, architecture, /*v2=*/false, b, d);
}

}  // namespace

// DeepseekV2Config's defaults (the remote configuration_deepseek.py of
// deepseek-ai/DeepSeek-V2): no experts unless the config names them.
const Family& DeepseekV2Family() {
  static const Family family{"deepseek_v2",
                             {"DeepseekV2ForCausalLM", "DeepseekV2Model"},
                             R"({
        "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 11008,
        "moe_intermediate_size": 1407, "num_hidden_layers": 30,
        "num_attention_heads": 32, "n_shared_experts": null,
        "n_routed_experts": null, "ep_size": 1, "kv_lora_rank": 512,
        "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128,
        "qk_nope_head_dim": 128, "moe_layer_freq": 1,
        "first_k_dense_replace": 0, "attention_bias": false,
        "tie_word_embeddings": false, "num_experts_per_tok": null,
        "norm_topk_prob": false, "seq_aux": true})",
                             &BuildV2};
  return family;
}

// DeepseekV3Config's defaults (configuration_deepseek_v3.py, 4.51.3:
// DeepSeek-V3's shape).
const Family& DeepseekV3Family() {
  // ColossalAI's DeepseekV3Policy (shardformer/policies/deepseek_v3.py)
  // asserts against tensor parallelism; auto_policy maps only the remote
  // code's DeepseekV3 classes to it, transformers' own to none.
  static const TpPolicy tp{
      .file = "deepseek_v3",
      .refuses_tp = "DeepSeekV3 does not support tensor parallelism"};
  static const Family family{"deepseek_v3",
                             {"DeepseekV3ForCausalLM", "DeepseekV3Model"},
                             R"({
        "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432,
        "moe_intermediate_size": 2048, "num_hidden_layers": 61,
        "num_attention_heads": 128, "n_shared_experts": 1,
        "n_routed_experts": 256, "kv_lora_rank": 512, "q_lora_rank": 1536,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
        "first_k_dense_replace": 3, "attention_bias": false,
        "num_experts_per_tok": 8, "norm_topk_prob": true,
        "tie_word_embeddings": false})",
                             &BuildV3,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
