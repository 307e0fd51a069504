"""The channel every Client opens (docs/deploy.md, "Client configuration").

service_config.json, beside this file, is the one copy of the service
config: the C++ command line compiles the same file in
(client/cli/service_config.h.in). It says round_robin over every address the
target resolves to, and a ChunkSearch call that meets UNAVAILABLE (a replica
gone) tried again, up to 5 attempts in all. The library adds client-side
health checking (a draining replica says NOT_SERVING for
chunkplan.v1.ChunkSearch first); the one-shot command line does not, since it
would pay a Watch call for it and `chunkplan health` must reach a NOT_SERVING
server.

This module imports nothing of the package, so that a test can read the
options without the generated chunkplan.v1 stubs.
"""

import json
import os

_HERE = os.path.dirname(os.path.abspath(__file__))

# The largest answer the server sends by default (--max_send_message_size)
# and the largest request it takes: a call within them is retried whole.
MAX_MESSAGE_BYTES = 64 << 20


def _service_config():
    with open(os.path.join(_HERE, "service_config.json")) as f:
        config = json.load(f)
    config["healthCheckConfig"] = {"serviceName": "chunkplan.v1.ChunkSearch"}
    return json.dumps(config)


SERVICE_CONFIG = _service_config()
# The channel arguments every Client starts from; `options` override them.
DEFAULT_OPTIONS = (
    ("grpc.service_config", SERVICE_CONFIG),
    ("grpc.enable_retries", 1),
    ("grpc.per_rpc_retry_buffer_size", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
)
