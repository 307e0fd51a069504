#include "server/models/decoder.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/models/layers.h"

namespace chunkplan::models {

absl::StatusOr<HeadDims> ReadHeadDims(const HfConfig& cfg, uint64_t hidden) {
  HeadDims dims;
  CHUNKPLAN_ASSIGN_OR_RETURN(dims.heads, cfg.Size("num_attention_heads"));
  CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> kv_heads,
                             cfg.OptionalSize("num_key_value_heads"));
  dims.kv_heads = kv_heads.value_or(dims.heads);
  CHUNKPLAN_RETURN_IF_ERROR(Divide(dims.heads, dims.kv_heads,
                                   "num_attention_heads / num_key_value_heads")
                                .status());
  CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> head_dim,
                             cfg.OptionalSize("head_dim"));
  if (head_dim) {
    dims.head_dim = *head_dim;
  } else {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        dims.head_dim,
        Divide(hidden, dims.heads, "hidden_size / num_attention_heads"));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(
      dims.q_width,
      Product({dims.heads, dims.head_dim}, "num_attention_heads * head_dim"));
  dims.kv_width = dims.kv_heads * dims.head_dim;  // at most q_width
  return dims;
}

void Attention(ParamBuilder& b, const HeadDims& dims, uint64_t hidden,
               bool qkv_bias, bool o_bias, bool qk_norm) {
  b.In("self_attn", [&] {
    Linear(b, "q_proj", hidden, dims.q_width, qkv_bias);
    Linear(b, "k_proj", hidden, dims.kv_width, qkv_bias);
    Linear(b, "v_proj", hidden, dims.kv_width, qkv_bias);
    Linear(b, "o_proj", dims.q_width, hidden, o_bias);
    if (qk_norm) Norms(b, dims.head_dim, {"q_norm", "k_norm"});
  });
}

void GatedMlp(ParamBuilder& b, uint64_t hidden, uint64_t inter, bool bias) {
  Linear(b, "gate_proj", hidden, inter, bias);
  Linear(b, "up_proj", hidden, inter, bias);
  Linear(b, "down_proj", inter, hidden, bias);
}

void Norms(ParamBuilder& b, uint64_t hidden,
           std::initializer_list<absl::string_view> names) {
  for (absl::string_view name : names) RmsNorm(b, name, hidden);
}

absl::StatusOr<DecoderShape> ReadDecoderShape(const HfConfig& cfg,
                                              absl::string_view architecture) {
  DecoderShape shape;
  CHUNKPLAN_ASSIGN_OR_RETURN(shape.hidden, cfg.Size("hidden_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(shape.vocab, cfg.Size("vocab_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(shape.layers, cfg.Size("num_hidden_layers"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      shape.tied, OutputTied(cfg, absl::EndsWith(architecture, "ForCausalLM")));
  return shape;
}

void SetDecoderFacts(const DecoderShape& shape, const HeadDims& dims,
                     uint64_t inter, ModelDescription& d) {
  d.hidden_size = shape.hidden;
  d.decoder_only = true;
  d.num_layers = shape.layers;
  d.num_attention_heads = dims.heads;
  d.num_key_value_heads = dims.kv_heads;
  d.intermediate_size = inter;
  d.vocab_size = shape.vocab;
  d.traits.head_dim = dims.head_dim;
  d.traits.tied_embeddings = shape.tied;
}

void ModelLlamaLayer(const HfConfig& cfg, absl::string_view act_default,
                     ModelDescription& d, absl::string_view act_key) {
  const absl::StatusOr<std::optional<std::string>> act =
      cfg.OptionalText(act_key);
  const absl::StatusOr<bool> dropout =
      cfg.NonZeroProbability("attention_dropout");
  if (!act.ok() || !dropout.ok()) {
    d.traits.not_estimated =
        std::string((!act.ok() ? act.status() : dropout.status()).message());
    return;
  }
  const std::string name = act->value_or(std::string(act_default));
  if (name != "silu" && name != "swish" && name != "gelu" &&
      name != "gelu_pytorch_tanh") {
    d.traits.not_estimated =
        absl::StrCat(act_key, " \"", name,
                     "\" is not modelled (silu, swish, gelu, "
                     "gelu_pytorch_tanh are)");
    return;
  }
  d.traits.attention_dropout = *dropout;
  d.traits.not_estimated.clear();
}

void CausalLm(ParamBuilder& b, absl::string_view architecture,
              const DecoderShape& shape,
              absl::FunctionRef<void(uint64_t)> layer, bool operations) {
  const bool lm_head = absl::EndsWith(architecture, "ForCausalLM");
  b.In(lm_head ? "model" : "", [&] {
    Embedding(b, "embed_tokens", shape.vocab, shape.hidden);
    if (operations) b.Op({"embed_tokens"});
    b.Repeat("layers", shape.layers, layer);
    RmsNorm(b, "norm", shape.hidden);
    if (operations) b.Op({"norm"});
  });
  if (lm_head && !shape.tied) {
    Linear(b, "lm_head", shape.hidden, shape.vocab, /*bias=*/false);
  }
  // The head's F.linear takes embed_tokens.weight where tied.
  if (lm_head && operations) {
    b.Op({shape.tied ? "model.embed_tokens" : "lm_head"});
  }
}

absl::StatusOr<Decoder> ReadDecoder(const HfConfig& cfg,
                                    absl::string_view architecture) {
  Decoder decoder;
  CHUNKPLAN_ASSIGN_OR_RETURN(decoder.shape,
                             ReadDecoderShape(cfg, architecture));
  CHUNKPLAN_ASSIGN_OR_RETURN(decoder.dims,
                             ReadHeadDims(cfg, decoder.shape.hidden));
  CHUNKPLAN_ASSIGN_OR_RETURN(decoder.inter, cfg.Size("intermediate_size"));
  return decoder;
}

void BuildDecoder(ParamBuilder& b, absl::string_view architecture,
                  const Decoder& decoder, const LayerStyle& style,
                  absl::FunctionRef<void(uint64_t)> feed_forward,
                  ModelDescription& d) {
  SetDecoderFacts(decoder.shape, decoder.dims, decoder.inter, d);
  const uint64_t h = decoder.shape.hidden;
  const bool operations =
      !style.forward_ops.empty() || style.feed_forward_ops != nullptr;
  CausalLm(
      b, architecture, decoder.shape,
      [&](uint64_t layer) {
        Attention(b, decoder.dims, h, style.qkv_bias, style.o_bias,
                  style.qk_norm);
        b.In(style.feed_forward, [&] { feed_forward(layer); });
        Norms(b, h, {"input_layernorm", "post_attention_layernorm"});
        if (style.feed_forward_norms) {
          Norms(b, h,
                {"pre_feedforward_layernorm", "post_feedforward_layernorm"});
        }
        for (absl::string_view op : style.forward_ops) b.Op({op});
        if (style.feed_forward_ops) style.feed_forward_ops(layer);
      },
      operations);
}

absl::Status BuildGatedDecoder(const HfConfig& cfg,
                               absl::string_view architecture,
                               const LayerStyle& style, bool mlp_bias,
                               ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(Decoder decoder, ReadDecoder(cfg, architecture));
  BuildDecoder(
      b, architecture, decoder, style,
      [&](uint64_t) {
        GatedMlp(b, decoder.shape.hidden, decoder.inter, mlp_bias);
      },
      d);
  return absl::OkStatus();
}

std::vector<TpRule> DecoderTpRules(TpLayer lm_head) {
  return {{"self_attn.q_proj", TpLayer::kColumn},
          {"self_attn.k_proj", TpLayer::kColumn},
          {"self_attn.v_proj", TpLayer::kColumn},
          {"self_attn.o_proj", TpLayer::kRow},
          {"mlp.gate_proj", TpLayer::kColumn},
          {"mlp.up_proj", TpLayer::kColumn},
          {"mlp.down_proj", TpLayer::kRow},
          {"embed_tokens", TpLayer::kVocab},
          {"lm_head", lm_head}};
}

}  // namespace chunkplan::models
