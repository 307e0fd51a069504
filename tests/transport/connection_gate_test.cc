#include "server/transport/connection_gate.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "server/transport/peer_address.h"

namespace chunkplan::transport {
namespace {

// A gRPC server fed by a ConnectionGate on 127.0.0.1, as chunkplan-server
// runs it.
class ConnectionGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<ConnectionGate>> gate =
        ConnectionGate::Listen("127.0.0.1:0", 1 << 16);
    ASSERT_TRUE(gate.ok()) << gate.status();
    gate_ = *std::move(gate);
    grpc::ServerBuilder builder;
    builder.RegisterCallbackGenericService(&service_);  // a service to serve
    auto acceptor = builder.experimental().AddExternalConnectionAcceptor(
        grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
        grpc::InsecureServerCredentials());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    gate_->Start(std::move(acceptor));
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
    gate_.reset();
  }

  // A TCP connection to the gate with a 30 s receive timeout, past the
  // HTTP/2 preface (gRPC's SETTINGS read back, so the gate has handed it
  // over); its address as the gate sees it goes to *peer.
  int Connect(std::string* peer) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(gate_->port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(
        connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    timeval patience{30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
    sockaddr_storage local{};
    socklen_t length = sizeof(local);
    getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length);
    *peer = PeerAddress(reinterpret_cast<sockaddr*>(&local), length);
    const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    EXPECT_EQ(send(fd, preface, sizeof(preface) - 1, 0),
              static_cast<ssize_t>(sizeof(preface) - 1));
    char frame_header[9];
    EXPECT_EQ(recv(fd, frame_header, sizeof(frame_header), MSG_WAITALL), 9);
    return fd;
  }

  // Reads until the server ends the connection (true) or 30 s pass.
  static bool EndedByServer(int fd) {
    char buffer[4096];
    for (;;) {
      const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

  grpc::CallbackGenericService service_;
  std::unique_ptr<ConnectionGate> gate_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(ConnectionGateTest, ShutDownPeerAbortsThatConnectionOnce) {
  std::string peer;
  const int fd = Connect(&peer);
  std::string other_peer;
  const int other = Connect(&other_peer);

  EXPECT_FALSE(gate_->ShutDownPeer("127.0.0.1:1"));  // never connected
  EXPECT_TRUE(gate_->ShutDownPeer(peer));
  EXPECT_FALSE(gate_->ShutDownPeer(peer));  // once
  EXPECT_TRUE(EndedByServer(fd));
  // The other connection is untouched: open, with nothing ending it.
  char buffer[4096];
  while (recv(other, buffer, sizeof(buffer), MSG_DONTWAIT) > 0) {
  }
  EXPECT_EQ(errno, EAGAIN);
  close(fd);
  close(other);
}

}  // namespace
}  // namespace chunkplan::transport
