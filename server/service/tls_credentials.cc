#include "server/service/tls_credentials.h"

#include <cerrno>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "grpcpp/security/server_credentials.h"

namespace chunkplan::service {

absl::StatusOr<std::string> ReadPemFile(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno != 0 ? errno : ENOENT;
    return absl::ErrnoToStatus(error, absl::StrCat("cannot read ", path));
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot read ", path));
  }
  std::string pem = std::move(content).str();
  if (!absl::StrContains(pem, "-----BEGIN ")) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " holds no PEM block"));
  }
  return pem;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsFiles& files) {
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key must be given together");
  }
  if (files.cert.empty()) {
    if (!files.client_ca.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca needs --tls_cert and --tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  grpc::SslServerCredentialsOptions options;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  CHUNKPLAN_ASSIGN_OR_RETURN(pair.cert_chain, ReadPemFile(files.cert));
  CHUNKPLAN_ASSIGN_OR_RETURN(pair.private_key, ReadPemFile(files.key));
  options.pem_key_cert_pairs.push_back(std::move(pair));
  if (files.client_ca.empty()) {
    options.client_certificate_request =
        GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
  } else {
    CHUNKPLAN_ASSIGN_OR_RETURN(options.pem_root_certs,
                               ReadPemFile(files.client_ca));
    options.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

}  // namespace chunkplan::service
