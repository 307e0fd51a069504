#include "server/service/wire_counts.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <span>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace chunkplan::service {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

// The running counts of one message's counted fields (kept across a
// message's occurrences, which protobuf merges), named with `prefix`.
struct Tally {
  absl::string_view prefix;
  std::span<const CountedField> fields;
  uint64_t counts[3] = {0, 0, 0};
};
static_assert(std::size(kSearchRequestCounted) <= 3 &&
              std::size(kLayoutRequestCounted) <= 3 &&
              std::size(kPlanRequestCounted) <= 3 &&
              std::size(kClusterCounted) <= 3 && std::size(kLoraCounted) <= 3);

// A nested message field whose occurrences are walked counting into
// `tally` (a ChunkSearchRequest's search, a PlanRequest's cluster), with the
// fields nested in it in turn (a search's model, the model's lora).
struct Nested {
  int number;
  Tally* tally;
  std::span<const Nested> inner = {};
};

absl::Status Malformed(const CodedInputStream& in, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " at byte ", in.CurrentPosition()));
}

// The length of a length-delimited field, read next from `in`.
absl::StatusOr<int> ReadLength(CodedInputStream& in) {
  uint32_t length = 0;
  if (!in.ReadVarint32(&length)) return Malformed(in, "a length cut short");
  if (length > static_cast<uint32_t>(INT_MAX - in.CurrentPosition())) {
    return Malformed(in, "a length past the end");
  }
  return static_cast<int>(length);
}

// RESOURCE_EXHAUSTED naming `tally`'s field `i`, past `limit`.
absl::Status TooMany(const Tally& tally, size_t i, uint64_t limit) {
  return absl::ResourceExhaustedError(
      absl::StrCat(tally.prefix, tally.fields[i].name, " has more than ", limit,
                   " entries; this server takes at most ", limit,
                   " parameters per request (--max_params)"));
}

// Adds one entry to `tally`'s field `i`; RESOURCE_EXHAUSTED once it is past
// `limit`.
absl::Status Add(Tally& tally, size_t i, uint64_t limit) {
  if (++tally.counts[i] <= limit) return absl::OkStatus();
  return TooMany(tally, i, limit);
}

// The bytes below 0x80 among the `n` at `bytes`: the varints that end
// there. Eight bytes at a time.
uint64_t VarintEnds(const uint8_t* bytes, size_t n) {
  uint64_t continued = 0;
  size_t b = 0;
  for (; b + 8 <= n; b += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + b, 8);
    // Each byte's top bit, moved to its lowest, summed by the multiply.
    continued +=
        (((word >> 7) & 0x0101010101010101u) * 0x0101010101010101u) >> 56;
  }
  for (; b < n; ++b) continued += bytes[b] >> 7;
  return n - continued;
}

// Counts the varints of one packed run (its length read next from `in`)
// without decoding them: each ends in its one byte below 0x80. The bytes
// are read where they lie, a slice at a time.
absl::Status CountPacked(CodedInputStream& in, Tally& tally, size_t i,
                         uint64_t limit) {
  absl::StatusOr<int> length = ReadLength(in);
  if (!length.ok()) return length.status();
  const absl::string_view name = tally.fields[i].name;
  int left = *length;
  uint8_t last = 0;
  while (left > 0) {
    const void* data = nullptr;
    int size = 0;
    if (!in.GetDirectBufferPointer(&data, &size)) {
      return Malformed(
          in, absl::StrCat("a packed ", tally.prefix, name, " run cut short"));
    }
    const int n = std::min(size, left);
    const auto* bytes = static_cast<const uint8_t*>(data);
    last = bytes[n - 1];
    tally.counts[i] += VarintEnds(bytes, static_cast<size_t>(n));
    if (tally.counts[i] > limit) return TooMany(tally, i, limit);
    in.Skip(n);
    left -= n;
  }
  if (last >= 0x80) {
    return Malformed(in, absl::StrCat("a packed ", tally.prefix, name,
                                      " run ends inside a varint"));
  }
  return absl::OkStatus();
}

// Counts one occurrence (tag `tag`, already read) of counted field `i`; an
// occurrence in a wire type other than the field's is, to protobuf, an
// unknown field, and skipped uncounted.
absl::Status CountField(CodedInputStream& in, uint32_t tag, Tally& tally,
                        size_t i, uint64_t limit) {
  const WireFormatLite::WireType type = WireFormatLite::GetTagWireType(tag);
  const bool varint = tally.fields[i].kind == CountedField::Kind::kVarint;
  if (varint && type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
    return CountPacked(in, tally, i, limit);
  }
  const bool entry = varint ? type == WireFormatLite::WIRETYPE_VARINT
                            : type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
  if (!WireFormatLite::SkipField(&in, tag)) {
    return Malformed(in, absl::StrCat("field ", tally.prefix,
                                      tally.fields[i].name, " cut short"));
  }
  return entry ? Add(tally, i, limit) : absl::OkStatus();
}

// Walks one message to its end (or `in`'s limit), counting into `tally`;
// the occurrences of each `nested` field are walked as its message,
// counting into its tally.
absl::Status Walk(CodedInputStream& in, Tally& tally, uint64_t limit,
                  std::span<const Nested> nested) {
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) {
      return in.ConsumedEntireMessage()
                 ? absl::OkStatus()
                 : Malformed(in, "a malformed field tag (or field number 0)");
    }
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    const Nested* inner = nullptr;
    for (const Nested& n : nested) {
      if (n.number == number) inner = &n;
    }
    if (inner != nullptr && WireFormatLite::GetTagWireType(tag) ==
                                WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      absl::StatusOr<int> length = ReadLength(in);
      if (!length.ok()) return length.status();
      const CodedInputStream::Limit outer = in.PushLimit(*length);
      absl::Status status = Walk(in, *inner->tally, limit, inner->inner);
      in.PopLimit(outer);
      if (!status.ok()) return status;
      continue;
    }
    size_t i = 0;
    while (i < tally.fields.size() && tally.fields[i].number != number) ++i;
    absl::Status status;
    if (i < tally.fields.size()) {
      status = CountField(in, tag, tally, i, limit);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      status = Malformed(in, absl::StrCat("field ", number, " cut short"));
    }
    if (!status.ok()) return status;
  }
}

// Walks the message in `bytes` with `top` (and `nested`, see Walk).
absl::Status WalkBody(const grpc::ByteBuffer& bytes, Tally& top, uint64_t limit,
                      std::span<const Nested> nested) {
  // The reader takes a mutable buffer; the copy shares the slices.
  grpc::ByteBuffer copy(bytes);
  grpc::ProtoBufferReader reader(&copy);
  CodedInputStream in(&reader);
  return Walk(in, top, limit, nested);
}

}  // namespace

absl::Status CheckSearchRequestCounts(const grpc::ByteBuffer& bytes,
                                      uint64_t max_params) {
  Tally top{"", kSearchRequestCounted};
  Tally model{"model.", {}};
  Tally lora{"model.lora.", kLoraCounted};
  const Nested in_model[] = {{kModelLoraField, &lora}};
  const Nested nested[] = {{kSearchModelField, &model, in_model}};
  return WalkBody(bytes, top, max_params, nested);
}

namespace {

// A LayoutRequest or PlanRequest: its own repeated fields (`counted`), its
// search (field `search_field`, with the model's lora), its cluster
// (`cluster_field`) and its workload's shape_from (with its lora).
absl::Status CheckRequestWithSearchCounts(const grpc::ByteBuffer& bytes,
                                          uint64_t max_params,
                                          std::span<const CountedField> counted,
                                          int search_field, int cluster_field) {
  Tally top{"", counted};
  Tally search{"search.", kSearchRequestCounted};
  Tally model{"search.model.", {}};
  Tally lora{"search.model.lora.", kLoraCounted};
  Tally cluster{"cluster.", kClusterCounted};
  Tally workload{"workload.", {}};
  Tally shape_from{"workload.shape_from.", {}};
  Tally shape_lora{"workload.shape_from.lora.", kLoraCounted};
  const Nested in_model[] = {{kModelLoraField, &lora}};
  const Nested in_search[] = {{kSearchModelField, &model, in_model}};
  const Nested in_shape[] = {{kModelLoraField, &shape_lora}};
  const Nested in_workload[] = {
      {kWorkloadShapeFromField, &shape_from, in_shape}};
  const Nested nested[] = {{search_field, &search, in_search},
                           {cluster_field, &cluster},
                           {kRequestWorkloadField, &workload, in_workload}};
  return WalkBody(bytes, top, max_params, nested);
}

}  // namespace

absl::Status CheckLayoutRequestCounts(const grpc::ByteBuffer& bytes,
                                      uint64_t max_params) {
  return CheckRequestWithSearchCounts(bytes, max_params, kLayoutRequestCounted,
                                      kLayoutSearchField, kLayoutClusterField);
}

absl::Status CheckPlanRequestCounts(const grpc::ByteBuffer& bytes,
                                    uint64_t max_params) {
  return CheckRequestWithSearchCounts(bytes, max_params, kPlanRequestCounted,
                                      kPlanSearchField, kPlanClusterField);
}

uint64_t LargestRequestBytes(uint64_t max_params) {
  constexpr uint64_t kBytesPerParam = 11 + 6 + 21 + 2;
  constexpr uint64_t kScalars = 4096;
  if (max_params > (UINT64_MAX - kScalars) / kBytesPerParam) return UINT64_MAX;
  return max_params * kBytesPerParam + kScalars;
}

}  // namespace chunkplan::service
