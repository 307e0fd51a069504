#include "server/transport/connection_gate.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

namespace chunkplan::transport {
namespace {

constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// A gRPC server fed by a ConnectionGate on 127.0.0.1 that refuses
// connections from descriptor `max_descriptor`, as chunkplan-server runs it.
class GateServer {
 public:
  explicit GateServer(int max_descriptor) {
    absl::StatusOr<std::unique_ptr<ConnectionGate>> gate =
        ConnectionGate::Listen("127.0.0.1:0", max_descriptor);
    EXPECT_TRUE(gate.ok()) << gate.status();
    gate_ = *std::move(gate);
    grpc::ServerBuilder builder;
    builder.RegisterCallbackGenericService(&service_);  // a service to serve
    auto acceptor = builder.experimental().AddExternalConnectionAcceptor(
        grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
        grpc::InsecureServerCredentials());
    server_ = builder.BuildAndStart();
    EXPECT_NE(server_, nullptr);
    gate_->Start(std::move(acceptor));
  }

  ~GateServer() {
    server_->Shutdown();
    gate_.reset();
  }

  ConnectionGate& gate() { return *gate_; }

 private:
  grpc::CallbackGenericService service_;
  std::unique_ptr<ConnectionGate> gate_;
  std::unique_ptr<grpc::Server> server_;
};

// A TCP socket with a 30 s receive timeout, not yet connected.
int NewSocket() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval patience{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
  return fd;
}

// connect(fd, the gate's address): 0, or -1 with errno.
int ConnectTo(int fd, const ConnectionGate& gate) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(gate.port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
}

// Connects `fd` to the gate and sends the HTTP/2 client preface.
void ConnectAndGreet(int fd, const ConnectionGate& gate) {
  ASSERT_EQ(ConnectTo(fd, gate), 0);
  ASSERT_EQ(send(fd, kPreface, sizeof(kPreface) - 1, MSG_NOSIGNAL),
            static_cast<ssize_t>(sizeof(kPreface) - 1));
}

// Whether gRPC answered on `fd`: its first frame's header (SETTINGS) read
// back within the receive timeout.
bool GrpcAnswers(int fd) {
  char frame_header[9];
  return recv(fd, frame_header, sizeof(frame_header), MSG_WAITALL) == 9 &&
         frame_header[3] == 0x4;  // SETTINGS
}

// Whether the peer ended `fd` (end of stream or reset) before sending
// anything.
bool EndedAtOnce(int fd) {
  char byte;
  const ssize_t n = recv(fd, &byte, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

TEST(ConnectionGateTest, HandsConnectionsToGrpc) {
  GateServer server(1 << 16);
  const int fd = NewSocket();
  ConnectAndGreet(fd, server.gate());
  EXPECT_TRUE(GrpcAnswers(fd));
  EXPECT_EQ(server.gate().refused(), 0u);
  close(fd);
}

TEST(ConnectionGateTest, RefusesConnectionsFromItsDescriptorBound) {
  GateServer server(0);  // every descriptor is at or above the bound
  const int fd = NewSocket();
  ConnectAndGreet(fd, server.gate());
  EXPECT_TRUE(EndedAtOnce(fd));
  EXPECT_EQ(server.gate().refused(), 1u);
  close(fd);
}

TEST(ConnectionGateTest, ClosedGateRefusesNewConnections) {
  GateServer server(1 << 16);
  server.gate().Close();
  server.gate().Close();  // idempotent
  const int fd = NewSocket();
  EXPECT_NE(ConnectTo(fd, server.gate()), 0);
  EXPECT_EQ(errno, ECONNREFUSED);
  close(fd);
}

// The gate's reason to be (grpc/grpc#20418): with its bound above the
// process's descriptor limit, accept4 fails with EMFILE while connections
// hold every descriptor; once they close, a new client is served.
TEST(ConnectionGateTest, AcceptsAgainAfterRunningOutOfDescriptors) {
  constexpr int kFlood = 16;
  constexpr int kRoom = 4;  // descriptors left for accepted connections
  GateServer server(1 << 16);
  // Every client socket is made before the limit is lowered: only the
  // server's accepts meet it.
  std::vector<int> flood;
  for (int i = 0; i < kFlood; ++i) flood.push_back(NewSocket());
  const int fresh = NewSocket();
  const int lowest_free = dup(0);  // the number the next accept gets
  ASSERT_GE(lowest_free, 0);
  close(lowest_free);
  rlimit was{};
  getrlimit(RLIMIT_NOFILE, &was);
  rlimit low = was;
  low.rlim_cur = lowest_free + kRoom;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);

  for (int fd : flood) ConnectAndGreet(fd, server.gate());
  // The first kRoom are handed over (and held by gRPC); the next accept
  // runs out of descriptors.
  for (int i = 0; i < kRoom; ++i) EXPECT_TRUE(GrpcAnswers(flood[i])) << i;
  while (server.gate().starved_accepts() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (int fd : flood) close(fd);

  ConnectAndGreet(fresh, server.gate());
  EXPECT_TRUE(GrpcAnswers(fresh));
  close(fresh);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &was), 0);
}

}  // namespace
}  // namespace chunkplan::transport
