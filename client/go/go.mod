module github.com/chunkplan/chunkplan/client/go

go 1.16

require (
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)
