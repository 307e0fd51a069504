#ifndef CHUNKPLAN_SERVER_SERVICE_TLS_CREDENTIALS_H_
#define CHUNKPLAN_SERVER_SERVICE_TLS_CREDENTIALS_H_

// The server's transport credentials: plaintext, TLS, or mutual TLS, from
// PEM files named by chunkplan-server's --tls_cert, --tls_key and
// --tls_client_ca.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"

namespace chunkplan::service {

// Paths of PEM files; empty means not given.
struct TlsFiles {
  std::string cert;       // the server's certificate chain
  std::string key;        // its private key
  std::string client_ca;  // CA(s) that must have signed a client's certificate
};

// Plaintext credentials when no path is set; TLS with `cert` and `key` when
// they are; and with `client_ca` also set, TLS that requires every client
// to present a certificate that `client_ca` signed (a client without one,
// or with one another CA signed, fails the handshake).
// Errors: INVALID_ARGUMENT when only one of `cert` and `key` is set or
// `client_ca` is set without them; the file's errno as a canonical code
// (NOT_FOUND, PERMISSION_DENIED, ...) naming the path when a file cannot be
// read; INVALID_ARGUMENT when a file holds no PEM block.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsFiles& files);

// The whole content of the file at `path`.
// Errors: the errno's canonical code, with a message that names `path`.
absl::StatusOr<std::string> ReadPemFile(const std::string& path);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_TLS_CREDENTIALS_H_
