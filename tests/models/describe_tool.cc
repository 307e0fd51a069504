// chunkplan-describe-tool: DescribeModel from the command line, as JSON, for
// the differential test (models_differential_test.py). Not installed.
//
//   chunkplan-describe-tool [--max_params=N] FILE [ARCHITECTURE]
//       prints FILE's description as one JSON object; exit 1 on an error
//   chunkplan-describe-tool [--max_params=N] --batch
//       reads JSON lines {"config": {...} or "text", "architecture": "...",
//       "tp_size": N, "sequence_parallelism": bool, "lora": {"rank": r,
//       "targets": [...]}} (the last three optional; lora as lora.h adds
//       the adapters) from stdin and writes one JSON line per request, a
//       description or {"error": {"code": "...", "message": "..."}}
//
// A description: model_type, architecture, hidden_size, names, numels,
// total, the shape facts, the tp facts, the operations and the config's
// keys (config_keys_read, config_keys_ignored, config_keys_harmless,
// warnings), under model_description.h's field names.

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "server/models/lora.h"
#include "server/models/model_description.h"

namespace {

using chunkplan::models::DescribeModel;
using chunkplan::models::ModelDescription;
using nlohmann::json;

json ToJson(const absl::StatusOr<ModelDescription>& described) {
  if (!described.ok()) {
    return {{"error",
             {{"code", absl::StatusCodeToString(described.status().code())},
              {"message", std::string(described.status().message())}}}};
  }
  const ModelDescription& d = *described;
  return {{"model_type", d.model_type},
          {"architecture", d.architecture},
          {"hidden_size", d.hidden_size},
          {"names", d.names},
          {"numels", d.numels},
          {"total", d.total},
          {"decoder_only", d.decoder_only},
          {"num_layers", d.num_layers},
          {"num_attention_heads", d.num_attention_heads},
          {"num_key_value_heads", d.num_key_value_heads},
          {"intermediate_size", d.intermediate_size},
          {"vocab_size", d.vocab_size},
          {"tp_size", d.tp_size},
          {"tp_policy", d.tp_policy},
          {"padded_vocab_size", d.padded_vocab_size},
          {"tp_notes", d.tp_notes},
          {"operations", d.operations},
          {"operation_layers", d.operation_layers},
          {"frozen", d.frozen},
          {"config_keys_read", d.config_keys.read},
          {"config_keys_ignored", d.config_keys.ignored},
          {"config_keys_harmless", d.config_keys.harmless},
          {"warnings", d.config_keys.warnings}};
}

// One batch request: its config (an object, sent as its text, or a string
// taken as the text itself) and its optional architecture.
json DescribeRequest(const std::string& line, uint64_t max_params) {
  const json request = json::parse(line);
  const json& config = request.at("config");
  const std::string text =
      config.is_string() ? config.get<std::string>() : config.dump();
  const std::string architecture = request.value("architecture", "");
  chunkplan::models::TpOptions tp;
  tp.tp_size = request.value("tp_size", 1u);
  tp.sequence_parallelism = request.value("sequence_parallelism", false);
  absl::StatusOr<ModelDescription> described =
      DescribeModel(text, architecture, max_params, tp);
  if (described.ok() && request.contains("lora")) {
    const json& lora = request.at("lora");
    const chunkplan::models::LoraSpec spec{
        .rank = lora.at("rank").get<uint32_t>(),
        .targets = lora.at("targets").get<std::vector<std::string>>()};
    if (absl::Status s =
            chunkplan::models::AddLoraAdapters(spec, max_params, *described);
        !s.ok()) {
      described = s;
    }
  }
  return ToJson(described);
}

int Batch(uint64_t max_params) {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::cout << DescribeRequest(line, max_params).dump() << "\n";
  }
  std::cout.flush();
  return std::cout.good() ? 0 : 1;
}

int One(const char* path, const char* architecture, uint64_t max_params) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::cerr << path << ": cannot be read\n";
    return 2;
  }
  std::ostringstream text;
  text << file.rdbuf();
  const json answer =
      ToJson(DescribeModel(text.str(), architecture, max_params));
  std::cout << answer.dump(2) << "\n";
  return answer.contains("error") ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t max_params = 1'000'000;  // the server's default --max_params
  bool batch = false;
  int arg = 1;
  for (; arg < argc && argv[arg][0] == '-'; ++arg) {
    const std::string flag = argv[arg];
    if (flag == "--batch") {
      batch = true;
    } else if (flag.rfind("--max_params=", 0) == 0) {
      max_params = std::strtoull(flag.c_str() + 13, nullptr, 10);
    } else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  if (batch && arg == argc) return Batch(max_params);
  if (!batch && (argc - arg == 1 || argc - arg == 2)) {
    return One(argv[arg], argc - arg == 2 ? argv[arg + 1] : "", max_params);
  }
  std::cerr << "usage: " << argv[0]
            << " [--max_params=N] (FILE [ARCHITECTURE] | --batch)\n";
  return 2;
}
