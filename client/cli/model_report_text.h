#ifndef CHUNKPLAN_CLIENT_CLI_MODEL_REPORT_TEXT_H_
#define CHUNKPLAN_CLIENT_CLI_MODEL_REPORT_TEXT_H_

// What every command says of the parameters it planned, from the server's
// ModelReport: the total in the table's header, and the model's warnings
// (in the table, or on stderr beside JSON).

#include <string>

#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::cli {

// The header line of a table, then one line per warning, e.g.
// "parameters    7,615,616,512 (qwen2, Qwen2ForCausalLM)\n"
// "warning: config key \"num_hidden_layer\" was ignored; ...\n".
std::string ReportHeader(const v1::ModelReport& report);

// ReportHeader of `response`'s model_report, or "" for a response without
// one (a server older than the field).
template <typename Response>
std::string HeaderOf(const Response& response) {
  return response.has_model_report() ? ReportHeader(response.model_report())
                                     : std::string();
}

// One line per warning ("warning: ...\n"), for stderr; empty without any.
std::string WarningLines(
    const google::protobuf::RepeatedPtrField<std::string>& warnings);

// `n` with a comma every three digits: "7,615,616,512".
std::string Grouped(uint64_t n);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_MODEL_REPORT_TEXT_H_
