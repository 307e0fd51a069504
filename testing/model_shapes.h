#ifndef CHUNKPLAN_TESTING_MODEL_SHAPES_H_
#define CHUNKPLAN_TESTING_MODEL_SHAPES_H_

// The parameter sizes of the two published models the tests search, written
// once: ColossalAI's GPT-2 test model and LLaMA-2 70B, each in
// model.parameters() order, built from the published configuration (plain
// C++: the GPU machine's check uses them too). tests/testing/
// model_shapes_test.cc checks them against the committed workloads, which
// chunkplan.models makes from the configuration files.

#include <cstdint>
#include <vector>

namespace chunkplan::testing {

// ColossalAI's test of search_chunk_configuration
// (tests/test_zero/test_gemini/test_search.py) searches the model zoo's
// GPT2LMHeadModel(n_layer=2, n_head=4, n_embd=128, vocab_size=50258,
// n_positions=1024) with search_range_m 1, search_interval 128,
// min_chunk_size_m 0 and the filter on, and asserts chunk size 527872.
inline constexpr uint64_t kGpt2TestEmbd = 128;
inline constexpr uint64_t kGpt2TestVocab = 50258;
inline constexpr uint64_t kGpt2TestPositions = 1024;
inline constexpr uint64_t kGpt2TestChunkSize = 527872;

// With the LM head tied to the embedding, torch yields it once (28 sizes;
// examples/gpt2_colossalai.json, bench/workloads/gpt2-colossalai-test.json);
// untied, lm_head.weight comes last (29 sizes). The filter drops both
// embedding-sized parameters, so the chunk size is the same.
enum class LmHead { kTied, kUntied };

inline std::vector<uint64_t> Gpt2TestNumels(LmHead head = LmHead::kTied) {
  constexpr uint64_t e = kGpt2TestEmbd;
  std::vector<uint64_t> n = {kGpt2TestVocab * e,       // wte
                             kGpt2TestPositions * e};  // wpe
  for (int layer = 0; layer < 2; ++layer) {
    for (const uint64_t s : {e, e,              // ln_1 weight, bias
                             e * 3 * e, 3 * e,  // attn.c_attn (Conv1D)
                             e * e, e,          // attn.c_proj
                             e, e,              // ln_2
                             e * 4 * e, 4 * e,  // mlp.c_fc
                             4 * e * e, e}) {   // mlp.c_proj
      n.push_back(s);
    }
  }
  n.push_back(e);  // ln_f weight
  n.push_back(e);  // ln_f bias
  if (head == LmHead::kUntied) n.push_back(kGpt2TestVocab * e);
  return n;
}

// LLaMA-2 70B (meta-llama/Llama-2-70b-hf's config.json, committed as
// tests/python/data/hf_configs/llama-2-70b.json): hidden 8192, intermediate
// 28672, 80 layers, 64 heads with 8 key-value heads (k and v project to
// 8 x 128 = 1024), vocabulary 32000, head not tied.
inline constexpr uint64_t kLlama70bHidden = 8192;
inline constexpr uint64_t kLlama70bKeyValue = 1024;
inline constexpr uint64_t kLlama70bIntermediate = 28672;
inline constexpr uint64_t kLlama70bVocab = 32000;
inline constexpr int kLlama70bLayers = 80;

// Its 723 parameters: the embedding; per layer q, k, v, o, the gate, up and
// down projections and the two RMSNorm weights; the final norm; the head.
inline std::vector<uint64_t> Llama2_70bNumels() {
  constexpr uint64_t d = kLlama70bHidden;
  constexpr uint64_t kv = kLlama70bKeyValue;
  constexpr uint64_t ff = kLlama70bIntermediate;
  std::vector<uint64_t> n = {kLlama70bVocab * d};  // embed_tokens
  for (int layer = 0; layer < kLlama70bLayers; ++layer) {
    for (const uint64_t s : {d * d, kv * d, kv * d, d * d,  // q, k, v, o
                             ff * d, ff * d, d * ff,        // gate, up, down
                             d, d}) {                       // the two norms
      n.push_back(s);
    }
  }
  n.push_back(d);                   // norm
  n.push_back(kLlama70bVocab * d);  // lm_head
  return n;
}

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTING_MODEL_SHAPES_H_
