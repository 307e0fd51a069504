#include "server/log_setup.h"

#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace chunkplan::server {
namespace {

constexpr char kTextPattern[] = "[%Y-%m-%d %H:%M:%S.%e] [%l] %v";
// '*' is JsonMessageFlag below.
constexpr char kJsonPattern[] =
    R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","msg":"%*"})";

// The record's message, JSON-escaped.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string escaped =
        JsonEscape(absl::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }

  std::unique_ptr<spdlog::custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

std::optional<spdlog::level::level_enum> ParseLevel(absl::string_view name) {
  using spdlog::level::level_enum;
  static constexpr std::pair<absl::string_view, level_enum> kLevels[] = {
      {"trace", level_enum::trace}, {"debug", level_enum::debug},
      {"info", level_enum::info},   {"warn", level_enum::warn},
      {"error", level_enum::err},   {"critical", level_enum::critical},
      {"off", level_enum::off},
  };
  for (const auto& [n, level] : kLevels) {
    if (n == name) return level;
  }
  return std::nullopt;
}

}  // namespace

std::string JsonEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

absl::Status ConfigureLogging(absl::string_view level,
                              absl::string_view format) {
  const std::optional<spdlog::level::level_enum> parsed = ParseLevel(level);
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--log_level=", level,
        ": expected trace, debug, info, warn, error, critical or off"));
  }
  std::unique_ptr<spdlog::pattern_formatter> formatter;
  if (format == "text") {
    formatter = std::make_unique<spdlog::pattern_formatter>(kTextPattern);
  } else if (format == "json") {
    formatter = std::make_unique<spdlog::pattern_formatter>(
        spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(kJsonPattern);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--log_format=", format, ": expected text or json"));
  }
  auto logger = std::make_shared<spdlog::logger>(
      "chunkplan", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_formatter(std::move(formatter));
  logger->set_level(*parsed);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
  return absl::OkStatus();
}

}  // namespace chunkplan::server
