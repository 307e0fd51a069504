// BERT: transformers' BertModel and BertForMaskedLM (modeling_bert.py,
// 4.51.3), with the operations of one forward pass in the order the
// modeling code runs them.

#include "common/status_macros.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

// Refuses what changes the parameters and is not modelled: relative
// position embeddings (a distance embedding per layer), cross attention.
absl::Status CheckOptions(const HfConfig& cfg) {
  CHUNKPLAN_ASSIGN_OR_RETURN(std::optional<std::string> position,
                             cfg.OptionalText("position_embedding_type"));
  if (position != "absolute") {
    return cfg.Refuse("position_embedding_type",
                      "only \"absolute\" is supported");
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(bool cross, cfg.Flag("add_cross_attention"));
  if (cross) {
    return cfg.Refuse("add_cross_attention",
                      "BERT with cross attention is not supported");
  }
  return absl::OkStatus();
}

// BertLayer: attention (self: query, key, value; output: dense, LayerNorm),
// intermediate.dense, output (dense, LayerNorm). Its operations in
// BertLayer.forward's order, the order it registers them: the self
// attention's query, key, value (BertSelfAttention and BertSdpaSelfAttention
// alike), BertSelfOutput's dense and LayerNorm, BertIntermediate's dense,
// BertOutput's dense and LayerNorm; each nn.Linear's F.linear and each
// nn.LayerNorm's F.layer_norm takes its weight and bias.
void Layer(ParamBuilder& b, uint64_t h, uint64_t inter) {
  b.In("attention", [&] {
    b.In("self", [&] {
      Linear(b, "query", h, h, /*bias=*/true);
      Linear(b, "key", h, h, /*bias=*/true);
      Linear(b, "value", h, h, /*bias=*/true);
    });
    b.In("output", [&] {
      Linear(b, "dense", h, h, /*bias=*/true);
      LayerNorm(b, "LayerNorm", h);
    });
  });
  b.In("intermediate", [&] { Linear(b, "dense", h, inter, /*bias=*/true); });
  b.In("output", [&] {
    Linear(b, "dense", inter, h, /*bias=*/true);
    LayerNorm(b, "LayerNorm", h);
  });
  for (const char* op :
       {"attention.self.query", "attention.self.key", "attention.self.value",
        "attention.output.dense", "attention.output.LayerNorm",
        "intermediate.dense", "output.dense", "output.LayerNorm"}) {
    b.Op({op});
  }
}

absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_RETURN_IF_ERROR(CheckOptions(cfg));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t h, cfg.Size("hidden_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t heads, cfg.Size("num_attention_heads"));
  CHUNKPLAN_RETURN_IF_ERROR(
      Divide(h, heads, "hidden_size / num_attention_heads").status());
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t inter, cfg.Size("intermediate_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t vocab, cfg.Size("vocab_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t positions,
                             cfg.Size("max_position_embeddings"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t types, cfg.Size("type_vocab_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t layers, cfg.Size("num_hidden_layers"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      bool tied, OutputTied(cfg, architecture == "BertForMaskedLM"));
  d.hidden_size = h;
  d.num_layers = layers;
  d.num_attention_heads = d.num_key_value_heads = heads;
  d.intermediate_size = inter;
  d.vocab_size = vocab;
  const bool masked_lm = architecture == "BertForMaskedLM";
  // BertModel: embeddings, encoder, and the pooler (BertForMaskedLM builds
  // its `bert` without one). BertEmbeddings.forward runs word_embeddings,
  // token_type_embeddings, then position_embeddings (registered before
  // token_type_embeddings), then LayerNorm. BertModel's pooled output is
  // taken as part of the loss (a pooler without a gradient would leave its
  // chunk unreduced, which GeminiDDP's _post_backward refuses).
  b.In(masked_lm ? "bert" : "", [&] {
    b.In("embeddings", [&] {
      Embedding(b, "word_embeddings", vocab, h);
      Embedding(b, "position_embeddings", positions, h);
      Embedding(b, "token_type_embeddings", types, h);
      LayerNorm(b, "LayerNorm", h);
      for (const char* op : {"word_embeddings", "token_type_embeddings",
                             "position_embeddings", "LayerNorm"}) {
        b.Op({op});
      }
    });
    b.In("encoder", [&] {
      b.Repeat("layer", layers, [&](uint64_t) { Layer(b, h, inter); });
    });
    if (!masked_lm) {
      Linear(b, "pooler.dense", h, h, /*bias=*/true);
      b.Op({"pooler.dense"});
    }
  });
  if (!masked_lm) return absl::OkStatus();
  // cls.predictions: its own `bias` before its children's; decoder.bias is
  // that same tensor, and decoder.weight is tied to the word embeddings
  // unless tie_word_embeddings is false.
  // BertLMPredictionHead.forward: transform (dense, then LayerNorm), then
  // decoder, whose F.linear takes its weight (the word embeddings' where
  // tied) and the head's `bias`, registered first and used last.
  b.In("cls.predictions", [&] {
    b.Add("bias", {vocab});
    b.In("transform", [&] {
      Linear(b, "dense", h, h, /*bias=*/true);
      LayerNorm(b, "LayerNorm", h);
    });
    if (!tied) Linear(b, "decoder", h, vocab, /*bias=*/false);
    b.Op({"transform.dense"});
    b.Op({"transform.LayerNorm"});
  });
  b.Op({tied ? "bert.embeddings.word_embeddings" : "cls.predictions.decoder",
        "cls.predictions.bias"});
  return absl::OkStatus();
}

}  // namespace

// BertConfig's defaults (configuration_bert.py: BERT base), and
// PretrainedConfig's add_cross_attention and tie_word_embeddings.
const Family& BertFamily() {
  // ColossalAI's BertPolicy (shardformer/policies/bert.py) and its masked-LM
  // head: the decoder and its bias (cls.predictions.bias, the same tensor)
  // padded and split; position and token-type embeddings stay whole.
  static const TpPolicy tp{
      .file = "bert",
      .rules = {{"attention.self.query", TpLayer::kColumn},
                {"attention.self.key", TpLayer::kColumn},
                {"attention.self.value", TpLayer::kColumn},
                {"attention.output.dense", TpLayer::kRow},
                {"intermediate.dense", TpLayer::kColumn},
                {"output.dense", TpLayer::kRow},
                {"word_embeddings", TpLayer::kVocab},
                {"cls.predictions.decoder", TpLayer::kVocab},
                {"cls.predictions", TpLayer::kVocab}}};
  static const Family family{"bert",
                             {"BertForMaskedLM", "BertModel"},
                             R"({
        "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
        "num_attention_heads": 12, "intermediate_size": 3072,
        "max_position_embeddings": 512, "type_vocab_size": 2,
        "position_embedding_type": "absolute", "add_cross_attention": false,
        "tie_word_embeddings": true})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
