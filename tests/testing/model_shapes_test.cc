// testing/model_shapes.h against files made without it: the committed
// workloads (bench/workloads/generate.py, from the published config.json
// files through chunkplan.models) and ColossalAI's GPT-2 example request.
#include "testing/model_shapes.h"

#include <cstdint>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "chunkplan/v1/chunk_search.pb.h"
#include "common/json_codec.h"
#include "gtest/gtest.h"

namespace chunkplan::testing {
namespace {

// The numels of the request in `relative` (under the source tree).
std::vector<uint64_t> NumelsOf(const std::string& relative) {
  std::ifstream in(std::string(CHUNKPLAN_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  v1::ChunkSearchRequest request;
  EXPECT_TRUE(common::JsonToMessage(text.str(), &request).ok()) << relative;
  return {request.numels().begin(), request.numels().end()};
}

TEST(ModelShapes, Llama2_70bIsTheCommittedWorkload) {
  const std::vector<uint64_t> numels = Llama2_70bNumels();
  EXPECT_EQ(numels.size(), 723u);
  EXPECT_EQ(numels, NumelsOf("bench/workloads/llama-2-70b.json"));
}

TEST(ModelShapes, Gpt2TestIsTheCommittedWorkloadAndExample) {
  const std::vector<uint64_t> tied = Gpt2TestNumels(LmHead::kTied);
  EXPECT_EQ(tied, NumelsOf("bench/workloads/gpt2-colossalai-test.json"));
  EXPECT_EQ(tied, NumelsOf("examples/gpt2_colossalai.json"));
  // 50258 * 128 + 527872: the embedding and the rest of the tied model.
  EXPECT_EQ(std::accumulate(tied.begin(), tied.end(), uint64_t{0}), 6960896u);
}

TEST(ModelShapes, Gpt2TestUntiedAddsTheHeadLast) {
  const std::vector<uint64_t> untied = Gpt2TestNumels(LmHead::kUntied);
  ASSERT_EQ(untied.size(), 29u);
  EXPECT_EQ(untied.back(), 50258u * 128u);  // lm_head.weight
}

}  // namespace
}  // namespace chunkplan::testing
