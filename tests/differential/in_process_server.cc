#include "tests/differential/in_process_server.h"

namespace chunkplan::testing {

InProcessServer::InProcessServer() : service_(service::ServiceOptions{}, {}) {
  grpc::ServerBuilder builder;
  builder.RegisterService(&service_);
  service::ApplyServerOptions(service::ServiceOptions{}, builder);
  server_ = builder.BuildAndStart();
  stub_ = v1::ChunkSearch::NewStub(
      server_->InProcessChannel(grpc::ChannelArguments()));
}

InProcessServer::~InProcessServer() {
  server_->Shutdown();
  server_->Wait();
}

}  // namespace chunkplan::testing
