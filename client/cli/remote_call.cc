#include "client/cli/remote_call.h"

#include <utility>

#include "absl/status/status.h"
#include "client/cli/service_config.h"
#include "common/request_file.h"
#include "grpc/impl/codegen/grpc_types.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace chunkplan::cli {
namespace {

// The content of `path` into `out`; nothing when `path` is empty.
absl::Status ReadIfGiven(absl::string_view path, std::string& out) {
  if (path.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> content = common::ReadInput(path);
  if (!content.ok()) return content.status();
  out = *std::move(content);
  return absl::OkStatus();
}

// The largest answer the server sends by default (--max_send_message_size),
// and the largest request it takes: a call within them is retried whole.
constexpr int kMaxMessageBytes = 64 << 20;

grpc::ChannelArguments ChannelArguments() {
  grpc::ChannelArguments arguments;
  arguments.SetServiceConfigJSON(kServiceConfig);
  arguments.SetInt(GRPC_ARG_ENABLE_RETRIES, 1);
  arguments.SetInt(GRPC_ARG_PER_RPC_RETRY_BUFFER_SIZE, kMaxMessageBytes);
  arguments.SetMaxReceiveMessageSize(kMaxMessageBytes);
  arguments.SetMaxSendMessageSize(kMaxMessageBytes);
  return arguments;
}

}  // namespace

absl::StatusOr<std::optional<TlsPem>> ReadTlsFiles(bool tls,
                                                   absl::string_view ca_path,
                                                   absl::string_view cert_path,
                                                   absl::string_view key_path) {
  if (cert_path.empty() != key_path.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key must be given together");
  }
  if (!tls && ca_path.empty() && cert_path.empty()) return std::nullopt;
  TlsPem pem;
  for (const auto& [path, out] :
       {std::pair<absl::string_view, std::string*>{ca_path, &pem.root_certs},
        {cert_path, &pem.cert_chain},
        {key_path, &pem.private_key}}) {
    if (absl::Status s = ReadIfGiven(path, *out); !s.ok()) return s;
  }
  return pem;
}

std::shared_ptr<grpc::Channel> OpenChannel(const RemoteTarget& target) {
  if (!target.tls.has_value()) {
    return grpc::CreateCustomChannel(
        target.address, grpc::InsecureChannelCredentials(), ChannelArguments());
  }
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = target.tls->root_certs;
  options.pem_private_key = target.tls->private_key;
  options.pem_cert_chain = target.tls->cert_chain;
  grpc::ChannelArguments arguments = ChannelArguments();
  if (!target.tls_server_name.empty()) {
    arguments.SetSslTargetNameOverride(target.tls_server_name);
  }
  return grpc::CreateCustomChannel(target.address,
                                   grpc::SslCredentials(options), arguments);
}

void ApplyDeadline(const RemoteTarget& target, grpc::ClientContext* context) {
  if (target.deadline == absl::InfiniteDuration()) return;
  context->set_deadline(absl::ToChronoTime(absl::Now() + target.deadline));
}

}  // namespace chunkplan::cli
