#include "tests/differential/random_models.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace chunkplan::testing {
namespace {

uint64_t Uniform(std::mt19937_64& rng, uint64_t low, uint64_t high) {
  return std::uniform_int_distribution<uint64_t>(low, high)(rng);
}

bool Chance(std::mt19937_64& rng, double p) {
  return std::bernoulli_distribution(p)(rng);
}

const char* Bool(bool value) { return value ? "true" : "false"; }

// A small DeepSeek-V3 (q_lora_rank null or not, dense and sparse layers
// at random, attention biases at random).
std::string RandomDeepseekV3(std::mt19937_64& rng, bool tied) {
  const uint64_t heads = Uniform(rng, 1, 4);
  const uint64_t experts = Uniform(rng, 1, 3);
  return absl::StrCat(
      R"({"model_type": "deepseek_v3", "num_attention_heads": )", heads,
      R"(, "num_key_value_heads": )", heads, R"(, "hidden_size": )",
      Uniform(rng, 1, 16), R"(, "intermediate_size": )", Uniform(rng, 1, 40),
      R"(, "moe_intermediate_size": )", Uniform(rng, 1, 20),
      R"(, "num_hidden_layers": )", Uniform(rng, 1, 3),
      R"(, "first_k_dense_replace": )", Uniform(rng, 0, 2),
      R"(, "n_routed_experts": )", experts, R"(, "num_experts_per_tok": )",
      Uniform(rng, 1, experts), R"(, "n_shared_experts": )", Uniform(rng, 1, 2),
      R"(, "kv_lora_rank": )", Uniform(rng, 1, 8), R"(, "q_lora_rank": )",
      Chance(rng, 0.5) ? std::string("null") : absl::StrCat(Uniform(rng, 1, 8)),
      R"(, "qk_rope_head_dim": )", Uniform(rng, 1, 4),
      R"(, "qk_nope_head_dim": )", Uniform(rng, 1, 4), R"(, "v_head_dim": )",
      Uniform(rng, 1, 4), R"(, "attention_bias": )", Bool(Chance(rng, 0.5)),
      R"(, "vocab_size": )", Uniform(rng, 1, 300),
      R"(, "tie_word_embeddings": )", Bool(tied), R"(, "architectures": [")",
      Chance(rng, 0.8) ? "DeepseekV3ForCausalLM" : "DeepseekV3Model", R"("]})");
}

// A small DeepSeek-V2 (the remote code's config): DeepSeek-V3's sizes,
// shared experts null now and then, MoE layers every moe_layer_freq-th, MoEGate
// greedy or group-limited (now and then its refused options: the default
// topk_method "gready", a sigmoid scoring_func, no auxiliary loss).
std::string RandomDeepseekV2(std::mt19937_64& rng, bool tied) {
  std::string config = RandomDeepseekV3(rng, tied);
  config.replace(config.find("deepseek_v3"), 11, "deepseek_v2");
  config.replace(config.find("DeepseekV3"), 10, "DeepseekV2");
  if (Chance(rng, 0.3)) {  // no shared experts (V2's null)
    const size_t at = config.find(R"("n_shared_experts": )") + 20;
    config.replace(at, 1, "null");
  }
  const uint64_t groups = Uniform(rng, 1, 3);
  const uint64_t method = Uniform(rng, 0, 9);
  return absl::StrCat(
      config.substr(0, config.size() - 1), R"(, "moe_layer_freq": )",
      Uniform(rng, 1, 2), R"(, "topk_method": )",
      method == 0   ? "null"
      : method <= 4 ? R"("greedy")"
                    : R"("group_limited_greedy")",
      R"(, "n_group": )", groups, R"(, "topk_group": )",
      Uniform(rng, 1, groups), R"(, "scoring_func": )",
      Chance(rng, 0.9) ? R"("softmax")" : R"("sigmoid")",
      R"(, "aux_loss_alpha": )", Chance(rng, 0.9) ? "0.001" : "0",
      R"(, "seq_aux": )", Bool(Chance(rng, 0.5)), R"(, "norm_topk_prob": )",
      Bool(Chance(rng, 0.5)), "}");
}

}  // namespace

std::string RandomModelConfig(std::mt19937_64& rng) {
  static const char* const kFamilies[] = {
      "gpt2",    "llama",       "mistral",     "qwen2",  "qwen3",
      "mixtral", "phi3",        "cohere",      "gemma2", "gpt_neox",
      "opt",     "llama4_text", "gemma3_text", "gemma",  "deepseek_v3",
      "falcon",  "bloom",       "deepseek_v2", "bert"};
  const std::string family =
      kFamilies[Uniform(rng, 0, std::size(kFamilies) - 1)];
  const bool tied = Chance(rng, 0.5);
  if (family == "deepseek_v3") return RandomDeepseekV3(rng, tied);
  if (family == "deepseek_v2") return RandomDeepseekV2(rng, tied);
  if (family == "falcon") {  // any of the three layouts, biased or not
    const uint64_t heads = Uniform(rng, 1, 4);
    const bool new_arch = Chance(rng, 0.4);
    return absl::StrCat(
        R"({"model_type": "falcon", "num_attention_heads": )", heads,
        R"(, "hidden_size": )", heads * Uniform(rng, 1, 8),
        R"(, "ffn_hidden_size": )", Uniform(rng, 1, 40),
        R"(, "num_hidden_layers": )", Uniform(rng, 1, 3), R"(, "vocab_size": )",
        Uniform(rng, 1, 300), R"(, "tie_word_embeddings": )", Bool(tied),
        R"(, "new_decoder_architecture": )", Bool(new_arch),
        R"(, "num_kv_heads": )", new_arch ? heads : 1, R"(, "multi_query": )",
        Bool(Chance(rng, 0.5)), R"(, "parallel_attn": )",
        Bool(Chance(rng, 0.6)), R"(, "bias": )", Bool(Chance(rng, 0.5)),
        R"(, "architectures": [")",
        Chance(rng, 0.8) ? "FalconForCausalLM" : "FalconModel", R"("]})");
  }
  if (family == "bloom") {
    const uint64_t heads = Uniform(rng, 1, 4);
    return absl::StrCat(
        R"({"model_type": "bloom", "n_head": )", heads, R"(, "hidden_size": )",
        heads * Uniform(rng, 1, 8), R"(, "n_layer": )", Uniform(rng, 1, 3),
        R"(, "vocab_size": )", Uniform(rng, 1, 300),
        R"(, "tie_word_embeddings": )", Bool(tied), R"(, "architectures": [")",
        Chance(rng, 0.8) ? "BloomForCausalLM" : "BloomModel", R"("]})");
  }
  if (family == "opt") {
    const uint64_t heads = Uniform(rng, 1, 4);
    const uint64_t hidden = heads * Uniform(rng, 1, 8);
    return absl::StrCat(
        R"({"model_type": "opt", "num_attention_heads": )", heads,
        R"(, "hidden_size": )", hidden, R"(, "ffn_dim": )", Uniform(rng, 1, 40),
        R"(, "num_hidden_layers": )", Uniform(rng, 1, 3), R"(, "vocab_size": )",
        Uniform(rng, 1, 300), R"(, "max_position_embeddings": )",
        Uniform(rng, 1, 64), R"(, "tie_word_embeddings": )", Bool(tied),
        R"(, "do_layer_norm_before": )", Bool(Chance(rng, 0.7)),
        R"(, "word_embed_proj_dim": )",
        Chance(rng, 0.3) ? Uniform(rng, 1, 8) : hidden, R"(, "enable_bias": )",
        Bool(Chance(rng, 0.5)), R"(, "layer_norm_elementwise_affine": )",
        Bool(Chance(rng, 0.8)), R"(, "architectures": [")",
        Chance(rng, 0.8) ? "OPTForCausalLM" : "OPTModel", R"("]})");
  }
  if (family == "gpt_neox") {
    static const char* const kPct[] = {"0.25", "0.5", "1.0"};
    const uint64_t heads = Uniform(rng, 1, 4);
    return absl::StrCat(
        R"({"model_type": "gpt_neox", "num_attention_heads": )", heads,
        R"(, "hidden_size": )", heads * Uniform(rng, 1, 8),
        R"(, "intermediate_size": )", Uniform(rng, 1, 40),
        R"(, "num_hidden_layers": )", Uniform(rng, 1, 3), R"(, "vocab_size": )",
        Uniform(rng, 1, 300), R"(, "tie_word_embeddings": )", Bool(tied),
        R"(, "rotary_pct": )", kPct[Uniform(rng, 0, 2)],
        R"(, "use_parallel_residual": )", Bool(Chance(rng, 0.5)),
        R"(, "attention_bias": )", Bool(Chance(rng, 0.5)),
        R"(, "architectures": [")",
        Chance(rng, 0.8) ? "GPTNeoXForCausalLM" : "GPTNeoXModel", R"("]})");
  }
  if (family == "bert") {
    const uint64_t heads = Uniform(rng, 1, 4);
    return absl::StrCat(
        R"({"model_type": "bert", "num_attention_heads": )", heads,
        R"(, "hidden_size": )", heads * Uniform(rng, 1, 8),
        R"(, "intermediate_size": )", Uniform(rng, 1, 40),
        R"(, "num_hidden_layers": )", Uniform(rng, 1, 3), R"(, "vocab_size": )",
        Uniform(rng, 1, 300), R"(, "max_position_embeddings": )",
        Uniform(rng, 1, 64), R"(, "type_vocab_size": )", Uniform(rng, 1, 2),
        R"(, "tie_word_embeddings": )", Bool(tied), R"(, "architectures": [")",
        Chance(rng, 0.5) ? "BertForMaskedLM" : "BertModel", R"("]})");
  }
  if (family == "gpt2") {
    const uint64_t heads = Uniform(rng, 1, 4);
    return absl::StrCat(
        R"({"model_type": "gpt2", "n_head": )", heads, R"(, "n_embd": )",
        heads * Uniform(rng, 1, 8), R"(, "n_layer": )", Uniform(rng, 1, 3),
        R"(, "n_positions": )", Uniform(rng, 1, 64), R"(, "vocab_size": )",
        Uniform(rng, 1, 300), R"(, "tie_word_embeddings": )", Bool(tied),
        R"(, "architectures": [")",
        Chance(rng, 0.8) ? "GPT2LMHeadModel" : "GPT2Model", R"("]})");
  }
  const uint64_t kv_heads = Uniform(rng, 1, 2);
  const uint64_t heads = kv_heads * Uniform(rng, 1, 2);
  const uint64_t head_dim = Uniform(rng, 1, 8);
  const std::string arch = absl::StrCat(family == "qwen2"         ? "Qwen2"
                                        : family == "qwen3"       ? "Qwen3"
                                        : family == "mistral"     ? "Mistral"
                                        : family == "mixtral"     ? "Mixtral"
                                        : family == "phi3"        ? "Phi3"
                                        : family == "cohere"      ? "Cohere"
                                        : family == "gemma2"      ? "Gemma2"
                                        : family == "gemma3_text" ? "Gemma3"
                                        : family == "gemma"       ? "Gemma"
                                        : family == "llama4_text" ? "Llama4"
                                                                  : "Llama",
                                        Chance(rng, 0.8) ? "ForCausalLM"
                                        : family == "llama4_text" ? "TextModel"
                                        : family == "gemma3_text" ? "TextModel"
                                                                  : "Model");
  std::string config = absl::StrCat(
      R"({"model_type": ")", family, R"(", "num_attention_heads": )", heads,
      R"(, "num_key_value_heads": )", kv_heads, R"(, "hidden_size": )",
      heads * head_dim, R"(, "head_dim": )", head_dim,
      R"(, "intermediate_size": )", Uniform(rng, 1, 40),
      R"(, "num_hidden_layers": )", Uniform(rng, 1, 3), R"(, "vocab_size": )",
      Uniform(rng, 1, 300), R"(, "tie_word_embeddings": )", Bool(tied),
      R"(, "architectures": [")", arch, R"("])");
  if (family == "llama") {
    absl::StrAppend(&config, R"(, "attention_bias": )", Bool(Chance(rng, 0.5)),
                    R"(, "mlp_bias": )", Bool(Chance(rng, 0.5)));
  }
  if (family == "qwen3") {
    absl::StrAppend(&config, R"(, "attention_bias": )", Bool(Chance(rng, 0.5)));
  }
  if (family == "phi3") {
    static const char* const kFactors[] = {"0.5", "0.75", "1.0"};
    absl::StrAppend(&config, R"(, "partial_rotary_factor": )",
                    kFactors[Uniform(rng, 0, 2)], R"(, "resid_pdrop": )",
                    Chance(rng, 0.5) ? "0.1" : "0.0");
  }
  if (family == "cohere") {
    absl::StrAppend(&config, R"(, "attention_bias": )", Bool(Chance(rng, 0.5)),
                    R"(, "use_qk_norm": )", Bool(Chance(rng, 0.5)));
  }
  if (family == "gemma2") {
    absl::StrAppend(&config, R"(, "attn_logit_softcapping": )",
                    Chance(rng, 0.5) ? "50.0" : "null",
                    R"(, "final_logit_softcapping": )",
                    Chance(rng, 0.5) ? "30.0" : "null");
  }
  if (family == "gemma3_text") {
    absl::StrAppend(&config, R"(, "attention_bias": )", Bool(Chance(rng, 0.5)),
                    R"(, "final_logit_softcapping": )",
                    Chance(rng, 0.5) ? "30.0" : "null",
                    R"(, "sliding_window_pattern": )", Uniform(rng, 1, 4));
  }
  if (family == "llama4_text") {  // NoPE layers within 3 (interval 1-3)
    const uint64_t experts = Uniform(rng, 1, 3);
    absl::StrAppend(&config, R"(, "num_local_experts": )", experts,
                    R"(, "intermediate_size_mlp": )", Uniform(rng, 1, 40),
                    R"(, "interleave_moe_layer_step": )", Uniform(rng, 1, 2),
                    R"(, "num_experts_per_tok": )", Uniform(rng, 1, experts),
                    R"(, "no_rope_layer_interval": )", Uniform(rng, 1, 4),
                    R"(, "use_qk_norm": )", Bool(Chance(rng, 0.5)),
                    R"(, "attn_temperature_tuning": )",
                    Chance(rng, 0.5) ? "4" : "false");
  }
  if (family == "mixtral") {
    absl::StrAppend(&config, R"(, "num_local_experts": )", Uniform(rng, 1, 3));
  }
  return config + "}";
}

}  // namespace chunkplan::testing
