#include "server/transport/h2_relay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/transport/peer_address.h"
#include "tests/transport/h2_test_frames.h"

namespace chunkplan::transport {
namespace {

using testing::Frame;
using testing::kAck;
using testing::kData;
using testing::kEndHeaders;
using testing::kHeaders;
using testing::kSettings;
using testing::Opening;

constexpr uint32_t kLimit = 2;
constexpr size_t kBuffer = 4096;  // small, so that buffers fill

// Writes all of `bytes` to blocking `fd`; false on an error.
bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads `fd` (blocking, with a receive timeout) until its end or an error,
// `chunk` bytes at a time, sleeping `pause` between reads (a slow reader).
// Returns what it read; *error gets the error's errno, or 0 at the end.
std::string ReadToEnd(int fd, size_t chunk = 65536,
                      absl::Duration pause = absl::ZeroDuration(),
                      int* error = nullptr) {
  std::string out;
  std::vector<char> buffer(chunk);
  for (;;) {
    const ssize_t n = recv(fd, buffer.data(), buffer.size(), 0);
    if (n <= 0) {
      if (error != nullptr) *error = n == 0 ? 0 : errno;
      return out;
    }
    out.append(buffer.data(), static_cast<size_t>(n));
    absl::SleepFor(pause);
  }
}

void SetReceiveTimeout(int fd) {
  timeval patience{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
}

// A connected loopback TCP pair: {the client's end, the server's end}.
std::pair<int, int> TcpPair() {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(listen(listener, 1), 0);
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_EQ(connect(client, reinterpret_cast<sockaddr*>(&address), length), 0);
  const int server = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  close(listener);
  SetReceiveTimeout(client);
  return {client, server};
}

size_t OpenDescriptors() {
  size_t count = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count;
}

// A relay with a small limit and small buffers; each test plays both the
// client (a loopback TCP socket) and gRPC (the pair end Adopt returns).
class H2RelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    H2RelayOptions options;
    options.max_streams = kLimit;
    options.buffer_bytes = kBuffer;
    options.drain = absl::Milliseconds(100);
    absl::StatusOr<std::unique_ptr<H2Relay>> relay = H2Relay::Start(
        options, [this](const std::string& peer, uint32_t streams) {
          absl::MutexLock lock(&mu_);
          aborts_.emplace_back(peer, streams);
        });
    ASSERT_TRUE(relay.ok()) << relay.status();
    relay_ = *std::move(relay);
  }

  // A client connection through the relay: {client's fd, gRPC's fd}, both
  // blocking with a receive timeout.
  std::pair<int, int> Connect(const std::string& peer = "ipv4:10.0.0.1:7") {
    auto [client, accepted] = TcpPair();
    fcntl(accepted, F_SETFL, O_NONBLOCK);
    absl::StatusOr<int> grpc_end = relay_->Adopt(accepted, peer);
    EXPECT_TRUE(grpc_end.ok()) << grpc_end.status();
    const int grpc_fd = grpc_end.ok() ? *grpc_end : -1;
    fcntl(grpc_fd, F_SETFL, 0);
    SetReceiveTimeout(grpc_fd);
    return {client, grpc_fd};
  }

  // Waits (at most 30 s) until the relay holds no connection.
  bool AllClosed() {
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (relay_->live() > 0 && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    return relay_->live() == 0;
  }

  std::unique_ptr<H2Relay> relay_;
  absl::Mutex mu_;
  std::vector<std::pair<std::string, uint32_t>> aborts_ ABSL_GUARDED_BY(mu_);
};

// The pattern of `n` bytes that the forwarding tests send.
std::string Pattern(size_t n) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 7919) >> 3);
  return out;
}

TEST_F(H2RelayTest, ForwardsEverythingToSlowReadersBothWays) {
  auto [client, grpc_fd] = Connect();
  // 1 MiB each way, 256 times the buffer, read 1000 bytes at a time with
  // pauses, while the other direction runs too.
  const std::string up = Opening() + Frame(kData, 0, 1, Pattern(1 << 20));
  const std::string down = Frame(kSettings, 0, 0) + Pattern(1 << 20);
  std::thread client_writer([&, c = client] {
    EXPECT_TRUE(WriteAll(c, up));
    shutdown(c, SHUT_WR);
  });
  std::thread grpc_writer([&, g = grpc_fd] {
    EXPECT_TRUE(WriteAll(g, down));
    shutdown(g, SHUT_WR);
  });
  std::string got_down;
  std::thread client_reader([&, c = client] {
    got_down = ReadToEnd(c, 1000, absl::Microseconds(20));
  });
  const std::string got_up = ReadToEnd(grpc_fd, 1000, absl::Microseconds(20));
  client_writer.join();
  grpc_writer.join();
  client_reader.join();
  EXPECT_TRUE(got_up == up) << got_up.size() << " of " << up.size();
  EXPECT_TRUE(got_down == down) << got_down.size() << " of " << down.size();
  close(client);
  close(grpc_fd);
  EXPECT_TRUE(AllClosed());
}

TEST_F(H2RelayTest, HalfClosePropagatesBothWays) {
  auto [client, grpc_fd] = Connect();
  ASSERT_TRUE(WriteAll(client, Opening()));
  shutdown(client, SHUT_WR);
  // gRPC reads the client's bytes, then the end.
  int error = -1;
  EXPECT_EQ(ReadToEnd(grpc_fd, 65536, absl::ZeroDuration(), &error), Opening());
  EXPECT_EQ(error, 0);
  // It can still answer; its end reaches the client after the answer.
  ASSERT_TRUE(WriteAll(grpc_fd, "answer"));
  shutdown(grpc_fd, SHUT_WR);
  EXPECT_EQ(ReadToEnd(client, 65536, absl::ZeroDuration(), &error), "answer");
  EXPECT_EQ(error, 0);
  EXPECT_TRUE(AllClosed());
  close(client);
  close(grpc_fd);
}

TEST_F(H2RelayTest, ClientResetClosesGrpcsEnd) {
  auto [client, grpc_fd] = Connect();
  ASSERT_TRUE(WriteAll(client, Opening()));
  std::string got(Opening().size(), '\0');
  ASSERT_EQ(recv(grpc_fd, got.data(), got.size(), MSG_WAITALL),
            static_cast<ssize_t>(got.size()));
  const linger abort{1, 0};
  setsockopt(client, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort));
  close(client);
  int error = -1;
  ReadToEnd(grpc_fd, 65536, absl::ZeroDuration(), &error);
  EXPECT_EQ(error, 0);  // gRPC sees its peer's end, not a timeout
  EXPECT_TRUE(AllClosed());
  close(grpc_fd);
}

TEST_F(H2RelayTest, StreamsOverTheLimitBeforeTheAckResetTheClient) {
  auto [client, grpc_fd] = Connect("ipv4:10.1.2.3:4567");
  std::string streams;
  for (uint32_t id = 1; id <= 2 * kLimit + 1; id += 2) {
    streams += Frame(kHeaders, kEndHeaders, id, "hh");
  }
  ASSERT_TRUE(WriteAll(client, Opening() + streams));
  // One stream over the limit: the client is reset, gRPC's end closed.
  int error = -1;
  ReadToEnd(client, 65536, absl::ZeroDuration(), &error);
  EXPECT_EQ(error, ECONNRESET);
  const std::string forwarded =
      ReadToEnd(grpc_fd, 65536, absl::ZeroDuration(), &error);
  EXPECT_EQ(error, 0);
  // Whatever gRPC got is what came before stream kLimit + 1.
  EXPECT_LT(forwarded.size(), (Opening() + streams).size());
  EXPECT_EQ(relay_->aborted(), 1u);
  {
    absl::MutexLock lock(&mu_);
    ASSERT_EQ(aborts_.size(), 1u);
    EXPECT_EQ(aborts_[0].first, "ipv4:10.1.2.3:4567");
    EXPECT_EQ(aborts_[0].second, kLimit + 1);
  }
  EXPECT_TRUE(AllClosed());
  close(client);
  close(grpc_fd);
}

TEST_F(H2RelayTest, NotHttp2IsClosedUnforwarded) {
  auto [client, grpc_fd] = Connect();
  ASSERT_TRUE(WriteAll(client, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  int error = -1;
  EXPECT_EQ(ReadToEnd(client, 65536, absl::ZeroDuration(), &error), "");
  EXPECT_EQ(error, 0);  // closed, not reset
  EXPECT_EQ(ReadToEnd(grpc_fd, 65536, absl::ZeroDuration(), &error), "");
  EXPECT_EQ(error, 0);
  EXPECT_EQ(relay_->aborted(), 0u);
  EXPECT_TRUE(AllClosed());
  close(client);
  close(grpc_fd);
}

TEST_F(H2RelayTest, StreamsAfterTheAckAreGrpcs) {
  auto [client, grpc_fd] = Connect();
  ASSERT_TRUE(WriteAll(client, Opening()));
  ASSERT_TRUE(WriteAll(grpc_fd, Frame(kSettings, 0, 0)));
  // The client reads gRPC's SETTINGS before it acknowledges them.
  char settings[9];
  ASSERT_EQ(recv(client, settings, sizeof(settings), MSG_WAITALL), 9);
  std::string streams = Frame(kSettings, kAck, 0);
  for (uint32_t id = 1; id <= 41; id += 2) {
    streams += Frame(kHeaders, kEndHeaders, id, "hh");
  }
  ASSERT_TRUE(WriteAll(client, streams));
  shutdown(client, SHUT_WR);
  EXPECT_EQ(ReadToEnd(grpc_fd), Opening() + streams);
  EXPECT_EQ(relay_->aborted(), 0u);
  close(grpc_fd);
  close(client);
  EXPECT_TRUE(AllClosed());
}

TEST_F(H2RelayTest, GrpcsEndIsNamedForTheClient) {
  auto [client, grpc_fd] = Connect(GrpcPeer("[2001:db8::1]:443"));
  sockaddr_un address{};
  socklen_t length = sizeof(address);
  ASSERT_EQ(
      getpeername(grpc_fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ASSERT_EQ(address.sun_family, AF_UNIX);
  ASSERT_EQ(address.sun_path[0], '\0');  // abstract, as gRPC then names it
  const std::string name(address.sun_path + 1,
                         length - offsetof(sockaddr_un, sun_path) - 1);
  // As gRPC 1.51 spells a TCP peer (its log: "ipv6:%5B::1%5D:35320").
  EXPECT_EQ(ClientPeer("unix-abstract:" + name), "ipv6:[2001:db8::1]:443");
  EXPECT_EQ(GrpcPeer("10.0.0.1:7"), "ipv4:10.0.0.1:7");
  // gRPC 1.51 percent-encodes the name in its URI (its log, through the
  // relay: "unix-abstract:chunkplan-relay/.../ipv6:%255B::1%255D:51172").
  EXPECT_EQ(ClientPeer("unix-abstract:chunkplan-relay/1-2-3/"
                       "ipv6:%255B::1%255D:51172"),
            "ipv6:%5B::1%5D:51172");
  EXPECT_EQ(ClientPeer("ipv4:10.0.0.1:7"), "ipv4:10.0.0.1:7");
  close(client);
  close(grpc_fd);
  EXPECT_TRUE(AllClosed());
}

TEST_F(H2RelayTest, ClientThatNeverReadsIsClosedAfterTheDrain) {
  auto [client, grpc_fd] = Connect();
  // gRPC writes more than the socket buffers and the relay's hold, then
  // closes; the client never reads.
  fcntl(grpc_fd, F_SETFL, O_NONBLOCK);
  const std::string block(65536, 'x');
  while (send(grpc_fd, block.data(), block.size(), MSG_NOSIGNAL) > 0) {
  }
  close(grpc_fd);
  EXPECT_TRUE(AllClosed());
  close(client);
}

TEST_F(H2RelayTest, ManyConnectionsLeaveNoDescriptorBehind) {
  const size_t before = OpenDescriptors();
  std::vector<std::pair<int, int>> connections;
  for (int i = 0; i < 200; ++i) connections.push_back(Connect());
  EXPECT_EQ(relay_->live(), 200u);
  EXPECT_EQ(OpenDescriptors(), before + 200 * 4);  // 2 here, 2 the relay's
  for (size_t i = 0; i < connections.size(); ++i) {
    auto [client, grpc_fd] = connections[i];
    ASSERT_TRUE(WriteAll(client, Opening()));
    // Half of them closed by the client first, half by gRPC once it has
    // read the client's bytes; the other side reads the end.
    if (i % 2 == 1) {
      std::string got(Opening().size(), '\0');
      EXPECT_EQ(recv(grpc_fd, got.data(), got.size(), MSG_WAITALL),
                static_cast<ssize_t>(got.size()));
    }
    close(i % 2 == 0 ? client : grpc_fd);
    int error = -1;
    if (i % 2 == 0) {
      EXPECT_EQ(ReadToEnd(grpc_fd, 65536, absl::ZeroDuration(), &error),
                Opening());
    } else {
      ReadToEnd(client, 65536, absl::ZeroDuration(), &error);
    }
    EXPECT_EQ(error, 0) << "connection " << i;
    close(i % 2 == 0 ? grpc_fd : client);
  }
  EXPECT_TRUE(AllClosed());
  EXPECT_EQ(OpenDescriptors(), before);
}

}  // namespace
}  // namespace chunkplan::transport
