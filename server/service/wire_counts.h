#ifndef CHUNKPLAN_SERVER_SERVICE_WIRE_COUNTS_H_
#define CHUNKPLAN_SERVER_SERVICE_WIRE_COUNTS_H_

// A request bounded by its size before protobuf decodes it: the entries of
// every repeated field of a serialized ChunkSearchRequest, LayoutRequest or
// PlanRequest, counted from the wire format with protobuf's own reader
// (io::CodedInputStream over the body's slices: no copy of the body, no
// allocation per entry; packed and unpacked encodings alike), the count
// ending as soon as one field is past the limit. A refused body then costs
// its bytes, not the 8 bytes per entry (and more) of its decoded message.

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "grpcpp/support/byte_buffer.h"

namespace chunkplan::service {

// A repeated field that the counter counts: its number, the name a refusal
// gives it, and how its entries sit on the wire (a varint each, packed or
// not; or one length-delimited message each).
struct CountedField {
  enum class Kind { kVarint, kMessage };
  int number;
  const char* name;
  Kind kind;
};

// The repeated fields of chunkplan.v1.ChunkSearchRequest.
inline constexpr CountedField kSearchRequestCounted[] = {
    {1, "numels", CountedField::Kind::kVarint},
    {2, "dp_degrees", CountedField::Kind::kVarint}};

// The repeated fields of chunkplan.v1.LayoutRequest, besides those of its
// `search` (field kLayoutSearchField, a ChunkSearchRequest, counted with
// kSearchRequestCounted under the prefix "search."; its occurrences merge, as
// protobuf merges them) and of its `cluster` (kLayoutClusterField, a
// Cluster: kClusterCounted, under "cluster.").
inline constexpr CountedField kLayoutRequestCounted[] = {
    {2, "configs", CountedField::Kind::kMessage},
    {3, "frozen", CountedField::Kind::kVarint}};
inline constexpr int kLayoutSearchField = 1;
inline constexpr int kLayoutClusterField = 7;

// The repeated fields of chunkplan.v1.PlanRequest besides those of its
// `search` (kPlanSearchField, as a LayoutRequest's) and of its `cluster`
// (kPlanClusterField, a Cluster: kClusterCounted, under "cluster.").
inline constexpr CountedField kPlanRequestCounted[] = {
    {2, "frozen", CountedField::Kind::kVarint},
    {21, "tp_sizes", CountedField::Kind::kVarint},
    {22, "extra_dp_sizes", CountedField::Kind::kVarint}};
inline constexpr int kPlanSearchField = 1;
inline constexpr int kPlanClusterField = 4;
inline constexpr CountedField kClusterCounted[] = {
    {4, "world_sizes", CountedField::Kind::kVarint}};
// The repeated fields of chunkplan.v1.Lora, reached from a
// ChunkSearchRequest through `model` (kSearchModelField, a ModelConfig) and
// its `lora` (kModelLoraField): the target names, each a length-delimited
// string, counted as entries (Kind::kMessage).
inline constexpr CountedField kLoraCounted[] = {
    {2, "targets", CountedField::Kind::kMessage}};
inline constexpr int kSearchModelField = 8;
inline constexpr int kModelLoraField = 3;
// A LayoutRequest's or PlanRequest's `workload` and the Workload's
// `shape_from` (a ModelConfig: its lora's targets, under
// "workload.shape_from.lora.").
inline constexpr int kRequestWorkloadField = 6;
inline constexpr int kWorkloadShapeFromField = 30;

// OK when no repeated field of the ChunkSearchRequest (LayoutRequest,
// PlanRequest) in
// `bytes` has more than `max_params` entries. Errors: RESOURCE_EXHAUSTED
// naming the first field (in wire order) found past the limit;
// INVALID_ARGUMENT saying where the bytes stop being protobuf's wire format
// (protobuf's parse then refuses them too; the reason serves its message).
// `bytes` is left as it was.
absl::Status CheckSearchRequestCounts(const grpc::ByteBuffer& bytes,
                                      uint64_t max_params);
absl::Status CheckLayoutRequestCounts(const grpc::ByteBuffer& bytes,
                                      uint64_t max_params);
absl::Status CheckPlanRequestCounts(const grpc::ByteBuffer& bytes,
                                    uint64_t max_params);

// The largest body that protobuf's serializers write for a LayoutRequest
// (the largest request of any method: a PlanRequest's numels 11,
// dp_degrees 6, frozen 2 and cluster.world_sizes 6 are fewer) of at most
// `max_params` entries per repeated field, unpacked encodings included: 40
// bytes per parameter (numels 11, dp_degrees 6, a ChunkConfig 21, frozen 2)
// and 4 KiB for the scalars. A LayoutRequest's cluster.world_sizes, which
// Layout refuses when not empty, is left out of the bound.
// A body beyond it is no such request; the server takes it as its receive
// limit where that is below --max_receive_message_bytes.
uint64_t LargestRequestBytes(uint64_t max_params);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_WIRE_COUNTS_H_
