// PythonFloatRepr against Python's repr of the same doubles (facts of
// CPython's float repr: shortest round-trip digits, fixed notation for
// decimal exponents -4..15, else "e-05"-style exponents of two or more
// digits), and the keyword-argument text.

#include "chunkplan/planner/plan_colossalai.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace chunkplan::planner {
namespace {

TEST(PythonFloatReprTest, AsPythonWritesThem) {
  EXPECT_EQ(PythonFloatRepr(0.0), "0.0");
  EXPECT_EQ(PythonFloatRepr(1.0), "1.0");
  EXPECT_EQ(PythonFloatRepr(0.1), "0.1");
  EXPECT_EQ(PythonFloatRepr(0.5), "0.5");
  EXPECT_EQ(PythonFloatRepr(std::nextafter(0.5, 1.0)), "0.5000000000000001");
  EXPECT_EQ(PythonFloatRepr(std::nextafter(1.0, 0.0)), "0.9999999999999999");
  EXPECT_EQ(PythonFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PythonFloatRepr(0.00012), "0.00012");
  EXPECT_EQ(PythonFloatRepr(0.00001), "1e-05");
  EXPECT_EQ(PythonFloatRepr(1.5e-05), "1.5e-05");
  EXPECT_EQ(PythonFloatRepr(std::numeric_limits<double>::denorm_min()),
            "5e-324");
  EXPECT_EQ(PythonFloatRepr(2.2250738585072014e-308),
            "2.2250738585072014e-308");
  EXPECT_EQ(PythonFloatRepr(123.456), "123.456");
  EXPECT_EQ(PythonFloatRepr(1e15), "1000000000000000.0");
  EXPECT_EQ(PythonFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PythonFloatRepr(1.5e300), "1.5e+300");
  EXPECT_EQ(PythonFloatRepr(-0.25), "-0.25");
}

TEST(ColossalaiKwargsTest, StaticAndAuto) {
  GeminiSettings s;
  s.offload_optim_frac = 1.0;
  s.offload_param_frac = 0.25;
  s.master_weights = false;
  s.gradient_accumulation = true;
  s.pin_memory = false;
  const std::vector<ChunkConfig> configs = {{4, 10, true}, {8, 64, false}};
  EXPECT_EQ(ColossalaiKwargs(s, "bf16", configs),
            "placement_policy=\"static\", shard_param_frac=1.0, "
            "offload_optim_frac=1.0, offload_param_frac=0.25, "
            "precision=\"bf16\", master_weights=False, "
            "enable_gradient_accumulation=True, pin_memory=False, "
            "chunk_config_dict={4: {\"chunk_size\": 10, \"keep_gathered\": "
            "True}, 8: {\"chunk_size\": 64, \"keep_gathered\": False}}");
  GeminiSettings a;
  a.placement = Placement::kAuto;
  EXPECT_EQ(
      ColossalaiKwargs(a, "fp16", std::vector<ChunkConfig>{{1, 7, false}}),
      "placement_policy=\"auto\", precision=\"fp16\", "
      "master_weights=True, enable_gradient_accumulation=False, "
      "pin_memory=True, chunk_config_dict={1: {\"chunk_size\": 7, "
      "\"keep_gathered\": False}}");
}

}  // namespace
}  // namespace chunkplan::planner
