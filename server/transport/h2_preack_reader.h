#ifndef CHUNKPLAN_SERVER_TRANSPORT_H2_PREACK_READER_H_
#define CHUNKPLAN_SERVER_TRANSPORT_H2_PREACK_READER_H_

// Reads the client-to-server bytes of one HTTP/2 connection up to the
// client's acknowledgement of the server's SETTINGS, counting the streams
// the client opens before it. gRPC 1.51 applies SETTINGS_MAX_CONCURRENT_
// STREAMS only from that acknowledgement on; the relay (h2_relay.h) aborts
// a connection whose client opens more streams before it. Only framing is
// read (the 24-byte preface, then each frame's 9-byte header); payloads are
// skipped, never decoded. docs/deploy.md, "Limits", says what it bounds.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace chunkplan::transport {

class H2PreAckReader {
 public:
  // A client may open at most `max_streams` streams (HEADERS on a stream id
  // above every id seen so far) before its acknowledgement.
  explicit H2PreAckReader(uint32_t max_streams) : max_streams_(max_streams) {}

  // The server has written its first bytes: its SETTINGS, which carry the
  // limit, are now those an acknowledgement applies (gRPC takes its sent
  // settings when it begins that write). An acknowledgement read before
  // this answers nothing the server sent and does not count.
  void ServerSpoke() { server_spoke_ = true; }

  // Reads the next `bytes` the client sent. Returns true once the client's
  // acknowledgement has been read (then the rest of `bytes` and everything
  // after are the server's to enforce, and need not be fed), false while
  // still watching. Errors, after which the connection must be closed
  // unforwarded: RESOURCE_EXHAUSTED when the client opens stream
  // `max_streams` + 1 before acknowledging; INVALID_ARGUMENT when the bytes
  // do not begin with the HTTP/2 client preface. Once it has returned true
  // or an error, it returns the same again.
  absl::StatusOr<bool> Feed(absl::string_view bytes);

  // Streams the client opened so far (before its acknowledgement).
  uint32_t streams_opened() const { return streams_opened_; }

 private:
  // Reads one whole 9-byte frame header.
  absl::Status OnFrameHeader();

  const uint32_t max_streams_;
  bool server_spoke_ = false;
  bool acknowledged_ = false;
  absl::Status error_;
  size_t preface_read_ = 0;    // bytes of the client preface matched
  char header_[9] = {};        // the frame header being read
  size_t header_read_ = 0;     // bytes of it read
  uint32_t payload_left_ = 0;  // payload bytes of the current frame to skip
  uint32_t highest_stream_ = 0;
  uint32_t streams_opened_ = 0;
};

}  // namespace chunkplan::transport

#endif  // CHUNKPLAN_SERVER_TRANSPORT_H2_PREACK_READER_H_
