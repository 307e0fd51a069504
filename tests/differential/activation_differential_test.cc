// EstimateActivationBytes against the Python activation oracle
// (tests/oracle/activation_oracle.py, written from the paper's itemized
// Sec. 4.1 tensors, not from this code): fresh random shapes and workloads
// every run: realistic ones, ones of any bit width (zeros and parts past
// 2^64-1 among them) and powers of two at the 2^64 and 2^128 edges, each part
// required equal to the oracle's, and a refusal required to carry the oracle's
// message (the same field).
//
// CHUNKPLAN_DIFF_SEED replays a run (a failure prints it),
// CHUNKPLAN_DIFF_REQUESTS sets the number of random cases (default 5000),
// CHUNKPLAN_DIFF_ACTIVATION_ORACLE names another oracle script (to check
// that a broken oracle fails this test).

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "chunkplan/planner/activation_estimate.h"
#include "common/json_codec.h"
#include "google/protobuf/struct.pb.h"
#include "gtest/gtest.h"
#include "testing/oracle_runner.h"
#include "tests/differential/mismatch_report.h"

#if !defined(CHUNKPLAN_PYTHON) || !defined(CHUNKPLAN_ACTIVATION_ORACLE)
#error "the build names the Python and tests/oracle/activation_oracle.py"
#endif

namespace chunkplan::testing {
namespace {

using planner::ActivationBytes;
using planner::ActivationWorkload;
using planner::TransformerShape;

constexpr int kDefaultCases = 5000;

struct Case {
  TransformerShape shape;
  ActivationWorkload work;
};

OracleCommand ActivationOracle() {
  const char* script = std::getenv("CHUNKPLAN_DIFF_ACTIVATION_ORACLE");
  return OracleCommand{CHUNKPLAN_PYTHON, script != nullptr
                                             ? script
                                             : CHUNKPLAN_ACTIVATION_ORACLE};
}

// A value of a random width from 0 to `max_bits` bits.
uint64_t AnyWidth(std::mt19937_64& rng, int max_bits) {
  const int bits = static_cast<int>(rng() % (max_bits + 1));
  return bits == 0 ? 0 : rng() >> (64 - bits);
}

// Powers of two placed so that 34sbh, L x a layer, 4sbv and the total
// land near 2^64 and 5as^2b near 2^128 (where an unchecked 128-bit product
// would wrap to a small answer).
void EdgeCase(std::mt19937_64& rng, Case* c) {
  auto in = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  auto pow2 = [](int e) { return uint64_t{1} << std::clamp(e, 0, 63); };
  const int es = in(0, 31), eb = in(0, 31), esb = es + eb;
  const int eh = std::clamp(in(58, 66) - esb - 1, 0, 63);
  c->work.sequence_length = static_cast<uint32_t>(pow2(es));
  c->work.micro_batch = static_cast<uint32_t>(pow2(eb));
  c->shape = {pow2(in(60, 66) - esb - eh - 1), pow2(eh),
              pow2(in(124, 130) - esb - es), pow2(in(59, 65) - esb - 2)};
}

Case RandomCase(std::mt19937_64& rng) {
  Case c;
  auto in = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  const uint64_t regime = in(0, 9);
  if (regime < 6) {  // shapes and workloads people train
    c.shape.num_layers = in(1, 128);
    c.shape.num_attention_heads = in(1, 128);
    c.shape.hidden_size = c.shape.num_attention_heads * in(1, 256);
    c.shape.vocab_size = in(1, 262144);
    c.work.micro_batch = static_cast<uint32_t>(in(1, 64));
    c.work.sequence_length = static_cast<uint32_t>(in(1, 131072));
  } else if (regime < 8) {  // any width: zeros, and parts past 2^64-1
    c.shape = {AnyWidth(rng, 64), AnyWidth(rng, 64), AnyWidth(rng, 64),
               AnyWidth(rng, 64)};
    c.work.micro_batch = static_cast<uint32_t>(AnyWidth(rng, 32));
    c.work.sequence_length = static_cast<uint32_t>(AnyWidth(rng, 32));
  } else {
    EdgeCase(rng, &c);
  }
  c.work.activation_checkpointing = in(0, 1) == 1;
  c.work.flash_attention = in(0, 1) == 1;
  return c;
}

std::string RequestLine(const Case& c) {
  auto flag = [](bool b) { return b ? "true" : "false"; };
  return absl::StrCat(
      R"({"shape": {"num_layers": ")", c.shape.num_layers,
      R"(", "hidden_size": ")", c.shape.hidden_size,
      R"(", "num_attention_heads": ")", c.shape.num_attention_heads,
      R"(", "vocab_size": ")", c.shape.vocab_size,
      R"("}, "workload": {"micro_batch": )", c.work.micro_batch,
      R"(, "sequence_length": )", c.work.sequence_length,
      R"(, "activation_checkpointing": )",
      flag(c.work.activation_checkpointing), R"(, "flash_attention": )",
      flag(c.work.flash_attention), "}}");
}

// What differs between the oracle's answer line and ours ("" when none).
std::string Diff(const std::string& line,
                 const absl::StatusOr<ActivationBytes>& ours) {
  google::protobuf::Struct oracle;
  if (absl::Status s = common::JsonToMessage(line, &oracle); !s.ok()) {
    return absl::StrCat("  unreadable oracle answer ", line, ": ", s.message(),
                        "\n");
  }
  const auto& fields = oracle.fields();
  if (fields.contains("error")) {
    const std::string& expected = fields.at("error").string_value();
    if (!ours.ok() &&
        ours.status().code() == absl::StatusCode::kInvalidArgument &&
        ours.status().message() == expected) {
      return "";
    }
    return absl::StrCat(
        "  oracle refused: ", expected,
        "\n  ours: ", ours.ok() ? "an answer" : ours.status().ToString(), "\n");
  }
  if (!ours.ok()) {
    return absl::StrCat("  oracle answered ", line,
                        "\n  ours refused: ", ours.status().ToString(), "\n");
  }
  std::string diff;
  for (const auto& [part, value] :
       {std::tuple{"per_layer_bytes", ours->per_layer_bytes},
        std::tuple{"layers_bytes", ours->layers_bytes},
        std::tuple{"embedding_dropout_bytes", ours->embedding_dropout_bytes},
        std::tuple{"final_norm_bytes", ours->final_norm_bytes},
        std::tuple{"output_input_bytes", ours->output_input_bytes},
        std::tuple{"logits_bytes", ours->logits_bytes},
        std::tuple{"total_bytes", ours->total_bytes}}) {
    const std::string expected =
        fields.contains(part) ? fields.at(part).string_value() : "(absent)";
    if (expected != absl::StrCat(value)) {
      absl::StrAppend(&diff, "  ", part, ": oracle ", expected, ", ours ",
                      value, "\n");
    }
  }
  return diff;
}

TEST(ActivationDifferentialTest, RandomShapesMatchTheOracle) {
  const uint64_t seed = EnvOr("CHUNKPLAN_DIFF_SEED", FreshSeed());
  const int count =
      static_cast<int>(EnvOr("CHUNKPLAN_DIFF_REQUESTS", kDefaultCases));
  std::cout << "CHUNKPLAN_DIFF_SEED=" << seed << " (" << count << " cases)\n";
  std::mt19937_64 rng(seed);
  std::vector<Case> cases;
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i) {
    cases.push_back(RandomCase(rng));
    lines.push_back(RequestLine(cases.back()));
  }
  const auto answers = RunOracleJsonl(ActivationOracle(), lines);
  ASSERT_TRUE(answers.ok()) << answers.status();

  const std::string context = absl::StrCat("CHUNKPLAN_DIFF_SEED=", seed);
  MismatchReport report(context, ActivationOracle());
  std::map<std::string, int> coverage;  // "answered", or the field refused
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto ours =
        planner::EstimateActivationBytes(cases[i].shape, cases[i].work);
    const absl::string_view message = ours.status().message();
    ++coverage[ours.ok() ? "answered"
                         : std::string(message.substr(0, message.find(' ')))];
    report.Add(i, lines[i], Diff((*answers)[i], ours));
  }
  report.Finish((std::filesystem::temp_directory_path() /
                 absl::StrCat("chunkplan_activation_failures_", seed, ".jsonl"))
                    .string());
  std::cout << "coverage:";
  for (const auto& [what, n] : coverage) std::cout << " " << what << "=" << n;
  std::cout << "\n";
}

}  // namespace
}  // namespace chunkplan::testing
