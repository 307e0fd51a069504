#ifndef CHUNKPLAN_SERVER_SERVICE_SEARCH_REQUEST_DECODER_H_
#define CHUNKPLAN_SERVER_SERVICE_SEARCH_REQUEST_DECODER_H_

// A serialized chunkplan.v1.ChunkSearchRequest decoded straight into the
// planner's request: one pass over the bytes, each size written once, into
// SearchRequest::numels (protobuf's path parses into a message and then
// copies every field out of it). It is a fast path, not a second parser:
// it takes only the encodings it decodes exactly as protobuf does, and
// declines the rest, which the caller then parses with protobuf
// (request_intake.h: ParseAndCheck), so that every input gets protobuf's
// answer.

#include <optional>

#include "absl/strings/string_view.h"
#include "server/planner/search_types.h"

namespace chunkplan::service {

// The planner's request for the ChunkSearchRequest serialized in `bytes`,
// with the proto defaults applied as FromProto applies them (min_chunk_size_m
// 32 and filter_exlarge_params true when absent), or nullopt.
//
// Decoded: numels (1) and dp_degrees (2) packed or one value per field, in
// any number of pieces, concatenated in order (a degree's varint truncated
// to 32 bits); search_range_m (3) and min_chunk_size_m (5) as fixed64;
// search_interval (4), filter_exlarge_params (6, any non-zero varint is
// true) and engine (7, truncated to 32 bits) as varints; the last of a
// repeated scalar wins; unknown fields of wire types 0, 1, 2 and 5 skipped.
// Declined (nullopt): anything else -- a known field in another wire type,
// groups, field number 0, a tag above 32 bits, a tag or a length of more
// than five bytes, a varint of more than ten bytes or with a tenth byte
// above 1, a length past the end, a packed run
// that ends inside a varint -- and an engine outside chunkplan.v1.Engine
// (FromProto's error then names it).
std::optional<planner::SearchRequest> DecodeSearchRequest(
    absl::string_view bytes);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_SEARCH_REQUEST_DECODER_H_
