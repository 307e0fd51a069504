#include "server/transport/channelz_sockets.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "gtest/gtest.h"
#include "server/transport/peer_address.h"

namespace chunkplan::transport {
namespace {

// Answers as gRPC 1.51's grpc_channelz_get_socket renders them (snake-case
// address members, int64 counters as strings, zeros left out).
constexpr char kSocket[] =
    R"({"socket":{"data":{"streamsStarted":"1000","streamsSucceeded":"3",)"
    R"("streamsFailed":"7","messagesReceived":"2"},)"
    R"("local":{"tcpip_address":{"ip_address":"fwAAAQ==","port":50051}},)"
    R"("ref":{"name":"chttp2 ipv4:127.0.0.1:34952","socketId":"5"},)"
    R"("remote":{"tcpip_address":{"ip_address":"fwAAAQ==","port":34952}}}})";

TEST(ParseSocketTest, OpenStreamsAreStartedLessEnded) {
  absl::StatusOr<SocketStreams> socket = ParseSocket(kSocket);
  ASSERT_TRUE(socket.ok()) << socket.status();
  EXPECT_EQ(socket->open_streams, 1000 - 3 - 7);
  EXPECT_EQ(socket->peer, "127.0.0.1:34952");
}

TEST(ParseSocketTest, CamelCaseAndEmptyDataAreRead) {
  // ::1 is fifteen zero bytes and a one: base64 "AAAAAAAAAAAAAAAAAAAAAQ==".
  absl::StatusOr<SocketStreams> socket =
      ParseSocket(R"({"socket":{"data":{},"remote":{"tcpipAddress":)"
                  R"({"ipAddress":"AAAAAAAAAAAAAAAAAAAAAQ==","port":9}}}})");
  ASSERT_TRUE(socket.ok()) << socket.status();
  EXPECT_EQ(socket->open_streams, 0);
  EXPECT_EQ(socket->peer, "[::1]:9");
}

TEST(ParseSocketTest, SomethingElseIsInvalid) {
  EXPECT_FALSE(ParseSocket("not json").ok());
  EXPECT_FALSE(ParseSocket(R"({"server":[]})").ok());
  EXPECT_FALSE(
      ParseSocket(R"({"socket":{"data":{"streamsStarted":"many"}}})").ok());
}

TEST(ParsePageTest, IdsAndTheEnd) {
  absl::StatusOr<ChannelzPage> servers =
      ParseServerPage(R"({"end":true,"server":[{"ref":{"serverId":"1"}},)"
                      R"({"ref":{"serverId":"12"}}]})");
  ASSERT_TRUE(servers.ok()) << servers.status();
  EXPECT_EQ(servers->ids, (std::vector<int64_t>{1, 12}));
  EXPECT_TRUE(servers->end);
  absl::StatusOr<ChannelzPage> sockets = ParseSocketPage(
      R"({"socketRef":[{"name":"chttp2 ipv4:127.0.0.1:1","socketId":"5"}]})");
  ASSERT_TRUE(sockets.ok()) << sockets.status();
  EXPECT_EQ(sockets->ids, (std::vector<int64_t>{5}));
  EXPECT_FALSE(sockets->end);
  EXPECT_FALSE(ParseSocketPage(R"({"socketRef":[{"name":"x"}]})").ok());
}

TEST(PeerAddressTest, SpelledAlikeFromSockaddrAndFromBytes) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_port = htons(50051);
  inet_pton(AF_INET, "10.1.2.3", &v4.sin_addr);
  EXPECT_EQ(PeerAddress(reinterpret_cast<sockaddr*>(&v4), sizeof(v4)),
            "10.1.2.3:50051");
  // An IPv4-mapped IPv6 peer (a "[::]" listener) is named as IPv4, as
  // gRPC names it.
  sockaddr_in6 mapped{};
  mapped.sin6_family = AF_INET6;
  mapped.sin6_port = htons(7);
  inet_pton(AF_INET6, "::ffff:10.1.2.3", &mapped.sin6_addr);
  EXPECT_EQ(PeerAddress(reinterpret_cast<sockaddr*>(&mapped), sizeof(mapped)),
            "10.1.2.3:7");
  EXPECT_EQ(PeerAddress(std::string("\x0a\x01\x02\x03", 4), 7), "10.1.2.3:7");
  EXPECT_EQ(PeerAddress(std::string(3, 'x'), 7), "");
}

}  // namespace
}  // namespace chunkplan::transport
