#include "server/service/search_request_decoder.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::service {
namespace {

// Wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;

// Reads over [pos, end); every read fails (returns false) rather than run
// past the end or accept what protobuf might read differently.
class Reader {
 public:
  Reader(const char* begin, const char* end)
      : pos_(reinterpret_cast<const uint8_t*>(begin)),
        end_(reinterpret_cast<const uint8_t*>(end)) {}

  bool done() const { return pos_ == end_; }

  // A varint of at most ten bytes, the tenth at most 1 (so the value fits
  // in 64 bits with nothing dropped).
  bool Varint(uint64_t* value) { return VarintOf(10, value); }

  // A tag or a length: a varint of at most five bytes (protobuf refuses
  // longer ones there).
  bool Short(uint64_t* value) { return VarintOf(5, value); }

  bool Fixed64(uint64_t* value) {
    if (end_ - pos_ < 8) return false;
    uint64_t v;
    std::memcpy(&v, pos_, 8);
    pos_ += 8;
    *value = v;  // little-endian, as the wire (x86-64 and aarch64 hosts)
    return true;
  }

  // The next `length` bytes as a reader of their own.
  bool Sub(uint64_t length, Reader* sub) {
    if (static_cast<uint64_t>(end_ - pos_) < length) return false;
    *sub = Reader(reinterpret_cast<const char*>(pos_),
                  reinterpret_cast<const char*>(pos_ + length));
    pos_ += length;
    return true;
  }

  // The varints in the rest of this reader (a packed run): how many bytes
  // end one.
  size_t CountVarints() const {
    size_t count = 0;
    for (const uint8_t* p = pos_; p != end_; ++p) count += *p < 0x80;
    return count;
  }

 private:
  bool VarintOf(int max_bytes, uint64_t* value) {
    uint64_t v = 0;
    for (int i = 0; i < max_bytes; ++i) {
      if (pos_ == end_) return false;
      const uint8_t byte = *pos_++;
      if (i == 9 && byte > 1) return false;
      v |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
      if (byte < 0x80) {
        *value = v;
        return true;
      }
    }
    return false;
  }

  const uint8_t* pos_;
  const uint8_t* end_;
};

// Appends a repeated field's values (`wire` 0: one; 2: a packed run) to
// `out`, each cast to T.
template <typename T>
bool ReadRepeated(Reader& in, uint32_t wire, std::vector<T>* out) {
  uint64_t v = 0;
  if (wire == kVarint) {
    if (!in.Varint(&v)) return false;
    out->push_back(static_cast<T>(v));
    return true;
  }
  if (wire != kLengthDelimited) return false;
  uint64_t length = 0;
  Reader run(nullptr, nullptr);
  if (!in.Short(&length) || !in.Sub(length, &run)) return false;
  out->reserve(out->size() + run.CountVarints());
  while (!run.done()) {
    if (!run.Varint(&v)) return false;
    out->push_back(static_cast<T>(v));
  }
  return true;
}

bool ReadDouble(Reader& in, uint32_t wire, double* out) {
  uint64_t bits = 0;
  if (wire != kFixed64 || !in.Fixed64(&bits)) return false;
  *out = std::bit_cast<double>(bits);
  return true;
}

bool ReadVarint(Reader& in, uint32_t wire, uint64_t* out) {
  return wire == kVarint && in.Varint(out);
}

}  // namespace

std::optional<planner::SearchRequest> DecodeSearchRequest(
    absl::string_view bytes) {
  Reader in(bytes.data(), bytes.data() + bytes.size());
  planner::SearchRequest out;
  while (!in.done()) {
    uint64_t tag = 0;
    if (!in.Short(&tag) || tag > UINT32_MAX) return std::nullopt;
    const uint32_t field = static_cast<uint32_t>(tag >> 3);
    const uint32_t wire = static_cast<uint32_t>(tag & 7);
    uint64_t v = 0;
    bool ok = false;
    switch (field) {
      case 1:
        ok = ReadRepeated(in, wire, &out.numels);
        break;
      case 2:
        ok = ReadRepeated(in, wire, &out.dp_degrees);
        break;
      case 3:
        ok = ReadDouble(in, wire, &out.search_range_m);
        break;
      case 4:
        ok = ReadVarint(in, wire, &out.search_interval);
        break;
      case 5:
        ok = ReadDouble(in, wire, &out.min_chunk_size_m);
        break;
      case 6:
        ok = ReadVarint(in, wire, &v);
        out.filter_exlarge_params = v != 0;
        break;
      case 7: {
        ok = ReadVarint(in, wire, &v);
        const int32_t engine = static_cast<int32_t>(v);
        if (!v1::Engine_IsValid(engine)) return std::nullopt;
        out.engine = static_cast<planner::Engine>(engine);
        break;
      }
      default:
        return std::nullopt;  // not taught (kDecodedSearchRequestFields)
    }
    if (!ok) return std::nullopt;
  }
  return out;
}

}  // namespace chunkplan::service
