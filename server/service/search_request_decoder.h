#ifndef CHUNKPLAN_SERVER_SERVICE_SEARCH_REQUEST_DECODER_H_
#define CHUNKPLAN_SERVER_SERVICE_SEARCH_REQUEST_DECODER_H_

// A serialized chunkplan.v1.ChunkSearchRequest decoded straight into the
// planner's request: one pass over the bytes, each size written once, into
// SearchRequest::numels (protobuf's path parses into a message and then
// copies every field out of it). It is a fast path, not a second parser:
// it takes only the fields and encodings it decodes exactly as protobuf
// does, and declines the rest, which the caller then parses with protobuf
// (request_intake.h: ParseAndCheck), so that every input gets protobuf's
// answer. Its gain: docs/performance.md, "Fast paths, measured".

#include <optional>

#include "absl/strings/string_view.h"
#include "server/planner/search_types.h"

namespace chunkplan::service {

// A field of chunkplan.v1.ChunkSearchRequest that DecodeSearchRequest
// decodes: its number, name, protobuf's name of its type
// (FieldDescriptor::type_name) and label. Any other field is declined.
struct DecodedField {
  enum class Label { kSingular, kOptional, kRepeated };
  int number;
  const char* name;
  const char* type;
  Label label;
};

// Every field the decoder is taught. A test compares it with the message's
// descriptor, so a field added to the proto fails it until the decoder
// learns the field (and this list names it).
inline constexpr DecodedField kDecodedSearchRequestFields[] = {
    {1, "numels", "uint64", DecodedField::Label::kRepeated},
    {2, "dp_degrees", "uint32", DecodedField::Label::kRepeated},
    {3, "search_range_m", "double", DecodedField::Label::kSingular},
    {4, "search_interval", "uint64", DecodedField::Label::kSingular},
    {5, "min_chunk_size_m", "double", DecodedField::Label::kOptional},
    {6, "filter_exlarge_params", "bool", DecodedField::Label::kOptional},
    {7, "engine", "enum", DecodedField::Label::kSingular}};

// Every field the decoder declines on purpose, so that protobuf parses the
// request: `model` (a request that names its model is described by the
// server's model families, whose cost dwarfs the decoding). The same test
// holds the taught and declined fields together equal to the message's.
inline constexpr DecodedField kDeclinedSearchRequestFields[] = {
    {8, "model", "message", DecodedField::Label::kSingular}};

// The planner's request for the ChunkSearchRequest serialized in `bytes`,
// with the proto defaults applied as FromProto applies them (min_chunk_size_m
// 32 and filter_exlarge_params true when absent), or nullopt.
//
// Decoded: numels (1) and dp_degrees (2) packed or one value per field, in
// any number of pieces, concatenated in order (a degree's varint truncated
// to 32 bits); search_range_m (3) and min_chunk_size_m (5) as fixed64;
// search_interval (4), filter_exlarge_params (6, any non-zero varint is
// true) and engine (7, truncated to 32 bits) as varints; the last of a
// repeated scalar wins. Declined (nullopt): every other field (any number
// outside kDecodedSearchRequestFields, of any wire type, field 0 included),
// a known field in another wire type, a tag above 32 bits, a tag or a length
// of more than five bytes, a varint of more than ten bytes or with a tenth
// byte above 1, a length past the end, a packed run that ends inside a
// varint, and an engine outside chunkplan.v1.Engine (FromProto's error then
// names it).
std::optional<planner::SearchRequest> DecodeSearchRequest(
    absl::string_view bytes);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_SEARCH_REQUEST_DECODER_H_
