#ifndef CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_MODELS_H_
#define CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_MODELS_H_

// Small random Hugging Face configs for the differential tests of requests
// that name their model.

#include <random>
#include <string>

namespace chunkplan::testing {

// A small random config.json (its text) of one family: those with an
// operation sequence (gpt2, llama, mistral, qwen2, qwen3, phi3, cohere,
// gemma2, gemma3_text, llama4_text, mixtral, gpt_neox, opt, deepseek_v3,
// falcon, bloom, deepseek_v2, gemma, bert; every class,
// tied or not, biases, Phi-3's partial RoPE and dropout, Cohere's q/k
// norms, Gemma-2's soft-capping, Gemma-3's sliding_window_pattern,
// DeepSeek-V2's MoEGate options at random).
std::string RandomModelConfig(std::mt19937_64& rng);

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_MODELS_H_
