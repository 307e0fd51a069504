#include "client/cli/model_request.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "chunkplan/v1/chunk_search.grpc.pb.h"
#include "client/cli/model_report_text.h"
#include "common/grpc_status.h"
#include "common/json_codec.h"
#include "common/request_file.h"
#include "common/status_macros.h"
#include "server/service/model_convert.h"

namespace chunkplan::cli {
namespace {

// The description of `config` by `server`, or here with the server's
// default limits.
absl::StatusOr<v1::ModelDescription> Describe(
    const v1::ModelConfig& config, const std::optional<RemoteTarget>& server) {
  if (!server.has_value()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        const models::ModelDescription description,
        service::DescribeConfig(config, service::ModelLimits{},
                                service::TpOptionsOf(config)));
    return service::ToProto(description);
  }
  const auto stub = v1::ChunkSearch::NewStub(OpenChannel(*server));
  grpc::ClientContext context;
  ApplyDeadline(*server, &context);
  v1::ModelDescription description;
  CHUNKPLAN_RETURN_IF_ERROR(
      common::ToAbslStatus(stub->Describe(&context, config, &description)));
  return description;
}

// The config's keys as the family accounted for them, and the warnings.
std::string KeysTable(const v1::ModelDescription& d) {
  const auto list = [](const auto& keys) {
    return keys.empty() ? std::string("-") : absl::StrJoin(keys, ", ");
  };
  return absl::StrCat("keys read     ", list(d.config_keys_read()),
                      "\nkeys ignored  ", list(d.config_keys_ignored()),
                      "\n  (harmless) ", list(d.config_keys_harmless()), "\n",
                      WarningLines(d.warnings()));
}

// The summary, the keys (KeysTable), then one row per parameter.
std::string DescriptionTable(const v1::ModelDescription& d) {
  // A trainable column (and count) only where some parameter is frozen.
  const bool marked = d.frozen_size() > 0;
  // A parameter list names no family (no model_type).
  std::string out = absl::StrFormat(
      "model         %s\nhidden size   %u\nparameters    %d tensors, "
      "%u elements\n",
      d.model_type().empty()
          ? std::string("a parameter list (no family)")
          : absl::StrCat(d.model_type(), " (", d.architecture(), ")"),
      d.hidden_size(), d.numels_size(), d.total());
  if (d.tp_size() > 1) {
    // Above the rows: the figures are tp rank 0's (every rank's) shards.
    absl::StrAppendFormat(
        &out,
        "tp size       %u (ColossalAI policy: %s; every tp rank holds these "
        "shapes)\n",
        d.tp_size(), d.tp_policy().empty() ? "none applied" : d.tp_policy());
    if (d.padded_vocab_size() != 0) {
      absl::StrAppendFormat(&out,
                            "vocabulary    %u as the vocab-parallel layers "
                            "pad it (a multiple of 64 x tp size)\n",
                            d.padded_vocab_size());
    }
    for (const std::string& note : d.tp_notes()) {
      absl::StrAppend(&out, "note          ", note, "\n");
    }
  }
  if (marked) {
    absl::StrAppendFormat(&out, "trainable     %u elements\n", d.trainable());
  }
  absl::StrAppendFormat(&out, "%s\n%9s  %15s  %s%s\n", KeysTable(d), "index",
                        "numel", marked ? "trainable  " : "", "name");
  for (int i = 0; i < d.numels_size(); ++i) {
    const std::string column =
        !marked ? "" : absl::StrFormat("%9s  ", d.frozen(i) ? "no" : "yes");
    absl::StrAppendFormat(&out, "%9d  %15u  %s%s\n", i, d.numels(i), column,
                          i < d.names_size() ? d.names(i) : "");
  }
  return out;
}

}  // namespace

absl::StatusOr<v1::ModelConfig> ReadModelConfig(const ModelFlags& flags) {
  const bool listed = !flags.params_path.empty();
  CHUNKPLAN_ASSIGN_OR_RETURN(
      std::string text,
      common::ReadInput(listed ? flags.params_path : flags.config_path));
  v1::ModelConfig config;
  if (listed) {
    config.set_param_list_json(std::move(text));
  } else {
    config.set_hf_config_json(std::move(text));
  }
  config.set_architecture(flags.architecture);
  if (flags.lora_rank != 0 || !flags.lora_targets.empty() ||
      flags.lora_dropout.has_value()) {
    v1::Lora* lora = config.mutable_lora();
    lora->set_rank(flags.lora_rank);
    for (const std::string& target : flags.lora_targets) {
      lora->add_targets(target);
    }
    lora->set_dropout(flags.lora_dropout.value_or(0));
  }
  config.set_freeze(flags.freeze);
  config.set_train(flags.train);
  return config;
}

absl::StatusOr<v1::ChunkSearchRequest> ModelSearchRequest(
    const ModelFlags& flags) {
  v1::ChunkSearchRequest request;
  CHUNKPLAN_ASSIGN_OR_RETURN(*request.mutable_model(), ReadModelConfig(flags));
  request.add_dp_degrees(flags.dp);
  request.set_search_range_m(
      flags.search_range_m.value_or(kGeminiSearchRangeM));
  request.set_search_interval(flags.search_interval.value_or(
      flags.hidden_dim.value_or(service::kGeminiDefaultSearchInterval)));
  if (flags.min_chunk_size_m) {
    request.set_min_chunk_size_m(*flags.min_chunk_size_m);
  }
  if (flags.no_filter) request.set_filter_exlarge_params(false);
  return request;
}

std::string IntervalNote(const ModelFlags& flags) {
  if (flags.workload_without_shape) {
    return absl::StrCat(
        SearchIntervalNote(flags),
        "activation estimate: none (a parameter list carries no shape: give "
        "--shape-from CONFIG, the config.json of a served family with the "
        "same layers, hidden size, heads and vocabulary)\n");
  }
  return SearchIntervalNote(flags);
}

std::string SearchIntervalNote(const ModelFlags& flags) {
  if (flags.search_interval.has_value()) {
    return absl::StrCat("search interval ", *flags.search_interval,
                        " (--search-interval)\n");
  }
  if (flags.hidden_dim.has_value()) {
    return absl::StrCat("search interval ", *flags.hidden_dim,
                        " (--hidden-dim: GeminiPlugin's hidden_dim)\n");
  }
  return absl::StrCat("search interval ", service::kGeminiDefaultSearchInterval,
                      " (GeminiPlugin's default: no hidden_dim; set it with "
                      "--hidden-dim when the trainer passes one)\n");
}

absl::StatusOr<CommandOutput> RunDescribe(
    const ModelFlags& flags, const std::optional<RemoteTarget>& server,
    bool table) {
  CHUNKPLAN_ASSIGN_OR_RETURN(v1::ModelConfig config, ReadModelConfig(flags));
  config.set_tp_size(flags.tp_size);
  config.set_enable_sequence_parallelism(flags.sequence_parallelism);
  CHUNKPLAN_ASSIGN_OR_RETURN(const v1::ModelDescription description,
                             Describe(config, server));
  CommandOutput out;
  if (table) {
    out.text = DescriptionTable(description);
  } else {
    out.text = absl::StrCat(common::MessageToJson(description), "\n");
    out.warnings = WarningLines(description.warnings());
  }
  return out;
}

}  // namespace chunkplan::cli
