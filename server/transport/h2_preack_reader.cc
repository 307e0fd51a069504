#include "server/transport/h2_preack_reader.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace chunkplan::transport {
namespace {

// RFC 9113, 3.4: the client connection preface.
constexpr absl::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr uint8_t kHeaders = 0x1;
constexpr uint8_t kSettings = 0x4;
constexpr uint8_t kAckFlag = 0x1;

uint32_t Byte(const char* at, int i) { return static_cast<uint8_t>(at[i]); }

}  // namespace

absl::Status H2PreAckReader::OnFrameHeader() {
  const uint32_t length =
      (Byte(header_, 0) << 16) | (Byte(header_, 1) << 8) | Byte(header_, 2);
  const uint8_t type = header_[3];
  const uint8_t flags = header_[4];
  const uint32_t stream = ((Byte(header_, 5) << 24) | (Byte(header_, 6) << 16) |
                           (Byte(header_, 7) << 8) | Byte(header_, 8)) &
                          0x7fffffffu;
  payload_left_ = length;
  header_read_ = 0;
  if (type == kSettings && (flags & kAckFlag) != 0 && stream == 0 &&
      server_spoke_) {
    acknowledged_ = true;
  } else if (type == kHeaders && stream > highest_stream_) {
    highest_stream_ = stream;
    if (++streams_opened_ > max_streams_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("stream ", streams_opened_,
                       " opened before the SETTINGS acknowledgement, more "
                       "than the limit of ",
                       max_streams_));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> H2PreAckReader::Feed(absl::string_view bytes) {
  if (!error_.ok()) return error_;
  while (!acknowledged_ && !bytes.empty()) {
    if (preface_read_ < kPreface.size()) {
      const size_t n = std::min(kPreface.size() - preface_read_, bytes.size());
      if (bytes.substr(0, n) != kPreface.substr(preface_read_, n)) {
        error_ = absl::InvalidArgumentError("not an HTTP/2 client preface");
        return error_;
      }
      preface_read_ += n;
      bytes.remove_prefix(n);
    } else if (payload_left_ > 0) {
      const size_t n = std::min<size_t>(payload_left_, bytes.size());
      payload_left_ -= static_cast<uint32_t>(n);
      bytes.remove_prefix(n);
    } else {
      const size_t n = std::min(sizeof(header_) - header_read_, bytes.size());
      std::memcpy(header_ + header_read_, bytes.data(), n);
      header_read_ += n;
      bytes.remove_prefix(n);
      if (header_read_ == sizeof(header_)) {
        error_ = OnFrameHeader();
        if (!error_.ok()) return error_;
      }
    }
  }
  return acknowledged_;
}

}  // namespace chunkplan::transport
