#ifndef CHUNKPLAN_CLIENT_CLI_TABLE_FORMAT_H_
#define CHUNKPLAN_CLIENT_CLI_TABLE_FORMAT_H_

// `--format table`: a search or layout response laid out for people.

#include <string>

#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::cli {

// One row per config (dp degree, chunk size in elements and in MiB, that is
// 2**20 elements with 2 decimals, keep gathered), then the total parameter
// count, the waste in elements and as a percentage of the total, the engine,
// the candidates and the planner's time (µs below 1 ms, else ms). Every line
// ends in '\n'.
std::string FormatTable(const v1::ChunkSearchResponse& response);

// Per group (in the response's order) its dp degree, chunk size, keep
// gathered, number of chunks and real padding in elements; then the elements
// placed, the real padding as a share of them and, when the search ran,
// ColossalAI's search's own waste figure (min_chunk_waste) beside it; then each
// part of the most loaded (rank 0) and least loaded (rank P-1) rank in GiB
// (2**30 bytes, 2 decimals), device and host, with the most loaded rank also
// under its most favourable chunk order; the gathered chunk buffer; the
// placement's outcome and notes; the server's verdict where it sent one
// (FormatVerdict); and the search's engine, candidates and time when it ran.
// Every line ends in '\n'.
std::string FormatLayoutTable(const v1::LayoutResponse& response);

// One row per frontier point (candidate, chunk size C', the value of
// `objective` with its unit in the header: elements, or bytes for
// OBJECTIVE_PEAK_RANK_BYTES; ColossalAI's search's waste, the real padding,
// rank 0's peak in GiB), then the engine, candidates and time.
std::string FormatFrontierTable(const v1::FrontierResponse& response,
                                v1::Objective objective);

// Bytes in GiB (2**30), 2 decimals: "79.17 GiB".
std::string Gib(uint64_t bytes);

// "CPU_PLATEAU" for ENGINE_CPU_PLATEAU, ...; the number for values this
// client does not know.
std::string EngineLabel(v1::Engine engine);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_TABLE_FORMAT_H_
