#ifndef CHUNKPLAN_TESTS_DIFFERENTIAL_IN_PROCESS_SERVER_H_
#define CHUNKPLAN_TESTS_DIFFERENTIAL_IN_PROCESS_SERVER_H_

// A ChunkSearchService with default options behind a real gRPC server, asked
// on its in-process channel, as the service tests do: the differential
// tests' path through the server.

#include <chrono>
#include <memory>

#include "absl/status/statusor.h"
#include "chunkplan/v1/chunk_search.grpc.pb.h"
#include "common/grpc_status.h"
#include "grpcpp/grpcpp.h"
#include "server/service/chunk_search_service.h"

namespace chunkplan::testing {

class InProcessServer {
 public:
  InProcessServer();
  ~InProcessServer();

  // `method` of the stub on `request`, with a minute's deadline; the call's
  // status as absl's.
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(const Request& request,
                                grpc::Status (v1::ChunkSearch::Stub::*method)(
                                    grpc::ClientContext*, const Request&,
                                    Response*)) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(60));
    Response response;
    const absl::Status status =
        common::ToAbslStatus(((*stub_).*method)(&context, request, &response));
    if (!status.ok()) return status;
    return response;
  }

 private:
  service::ChunkSearchService service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::ChunkSearch::Stub> stub_;
};

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTS_DIFFERENTIAL_IN_PROCESS_SERVER_H_
