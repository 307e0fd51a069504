#include "chunkplan/planner/plan_colossalai.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace chunkplan::planner {
namespace {

const char* PyBool(bool value) { return value ? "True" : "False"; }

// `digits` (no point, first digit non-zero) times 10^(decpt - size) in fixed
// notation, with ".0" when whole.
std::string Fixed(std::string_view digits, int decpt) {
  std::string out;
  const int n = static_cast<int>(digits.size());
  if (decpt <= 0) {
    out = "0." + std::string(-decpt, '0') + std::string(digits);
  } else if (decpt >= n) {
    out = std::string(digits) + std::string(decpt - n, '0') + ".0";
  } else {
    out = std::string(digits.substr(0, decpt)) + "." +
          std::string(digits.substr(decpt));
  }
  return out;
}

}  // namespace

std::string PythonFloatRepr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-trip digits, as d.ddde[+-]XX.
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), std::abs(value),
                                       std::chars_format::scientific);
  const std::string_view text(buf, end - buf);
  const size_t e = text.find('e');
  std::string digits(text.substr(0, e));
  if (digits.size() > 1) digits.erase(1, 1);  // the point
  const int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  const int decpt = exponent + 1;  // value = 0.digits x 10^decpt
  const std::string sign = value < 0 ? "-" : "";
  if (decpt > -4 && decpt <= 16) return sign + Fixed(digits, decpt);
  std::string mantissa = digits.substr(0, 1);
  if (digits.size() > 1) absl::StrAppend(&mantissa, ".", digits.substr(1));
  const int magnitude = std::abs(exponent);
  return absl::StrCat(sign, mantissa, "e", exponent < 0 ? "-" : "+",
                      magnitude < 10 ? "0" : "", magnitude);
}

std::string ColossalaiKwargs(const GeminiSettings& settings,
                             const std::string& precision,
                             std::span<const ChunkConfig> configs) {
  std::string text;
  if (settings.placement == Placement::kAuto) {
    text = "placement_policy=\"auto\"";
  } else {
    text = absl::StrCat(
        "placement_policy=\"static\", shard_param_frac=",
        PythonFloatRepr(settings.shard_param_frac.value_or(1.0)),
        ", offload_optim_frac=", PythonFloatRepr(settings.offload_optim_frac),
        ", offload_param_frac=", PythonFloatRepr(settings.offload_param_frac));
  }
  absl::StrAppend(
      &text, ", precision=\"", precision,
      "\", master_weights=", PyBool(settings.master_weights),
      ", enable_gradient_accumulation=", PyBool(settings.gradient_accumulation),
      ", pin_memory=", PyBool(settings.pin_memory));
  if (settings.max_prefetch != 0) {
    absl::StrAppend(&text, ", max_prefetch=", settings.max_prefetch);
  }
  if (settings.tp_size > 1) {
    absl::StrAppend(&text, ", tp_size=", settings.tp_size);
    if (settings.sequence_parallelism) {
      absl::StrAppend(&text, ", enable_sequence_parallelism=True");
    }
  }
  if (settings.extra_dp_size > 1) {
    absl::StrAppend(&text, ", extra_dp_size=", settings.extra_dp_size);
  }
  absl::StrAppend(&text, ", chunk_config_dict={");
  for (size_t i = 0; i < configs.size(); ++i) {
    absl::StrAppend(&text, i > 0 ? ", " : "", configs[i].dp_degree,
                    ": {\"chunk_size\": ", configs[i].chunk_size,
                    ", \"keep_gathered\": ", PyBool(configs[i].keep_gathered),
                    "}");
  }
  absl::StrAppend(&text, "}");
  return text;
}

}  // namespace chunkplan::planner
