#ifndef CHUNKPLAN_TESTS_TRANSPORT_H2_TEST_FRAMES_H_
#define CHUNKPLAN_TESTS_TRANSPORT_H2_TEST_FRAMES_H_

// HTTP/2 client bytes written out by hand from RFC 9113 (sections 3.4 and
// 4.1), for the relay's tests: the preface and frames with any header.

#include <cstdint>
#include <string>

namespace chunkplan::transport::testing {

inline constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
inline constexpr uint8_t kData = 0x0, kHeaders = 0x1, kPriority = 0x2,
                         kRstStream = 0x3, kSettings = 0x4, kContinuation = 0x9;
inline constexpr uint8_t kAck = 0x1, kEndHeaders = 0x4;

// A frame: 24-bit length, type, flags, 31-bit stream id, payload.
inline std::string Frame(uint8_t type, uint8_t flags, uint32_t stream,
                         const std::string& payload = "") {
  const size_t n = payload.size();
  std::string out = {static_cast<char>(n >> 16),
                     static_cast<char>(n >> 8),
                     static_cast<char>(n),
                     static_cast<char>(type),
                     static_cast<char>(flags),
                     static_cast<char>(stream >> 24),
                     static_cast<char>(stream >> 16),
                     static_cast<char>(stream >> 8),
                     static_cast<char>(stream)};
  return out + payload;
}

// The preface and an empty SETTINGS, as a client opens.
inline std::string Opening() {
  return std::string(kPreface) + Frame(kSettings, 0, 0);
}

}  // namespace chunkplan::transport::testing

#endif  // CHUNKPLAN_TESTS_TRANSPORT_H2_TEST_FRAMES_H_
