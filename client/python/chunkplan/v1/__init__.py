"""chunkplan.v1's generated messages and gRPC stubs.

The build writes chunk_search_pb2.py and chunk_search_pb2_grpc.py here from
proto/chunkplan/v1/chunk_search.proto (protoc and grpc_python_plugin, with
proto/ as the proto path, so the stubs' own `from chunkplan.v1 import ...`
resolves inside this package). They are never edited by hand.
"""
