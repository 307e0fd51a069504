# syntax=docker/dockerfile:1
# chunkplan-server image, CPU (Debian 12) or CUDA (NVIDIA's CUDA image):
#
#   docker build -t chunkplan:0.1.0-cpu .
#   docker build --build-arg VARIANT=cuda -t chunkplan:0.1.0-cuda .
#
# The build stage installs with scripts/install-deps.sh and builds and tests
# with scripts/test.sh, the commands CI runs, so the image cannot drift from
# what CI tests; CTEST_ARGS picks the tests run here (default: the server's
# end-to-end tests; empty: all) and BUILD_TARGETS what is built for them
# (default: the two binaries, the Python client and the held test server
# those tests drive, about half the compile of the whole tree; empty:
# everything); SKIP_TESTS=1 builds without testing. The runtime stage holds
# only the two binaries and the shared libraries they load, and runs as a
# non-root user.
# deploy/podman-build.sh builds the CPU variant without a Docker engine.

ARG VARIANT=cpu
ARG DEBIAN_IMAGE=debian:12
ARG DEBIAN_RUNTIME_IMAGE=debian:12-slim
# Ubuntu 24.04 ships the same gRPC (1.51), protobuf (3.21) and abseil
# (20220623) as Debian 12; NVIDIA publishes no Debian CUDA images.
ARG CUDA_IMAGE=nvidia/cuda:13.0.1-devel-ubuntu24.04
ARG CUDA_RUNTIME_IMAGE=nvidia/cuda:13.0.1-base-ubuntu24.04

FROM ${DEBIAN_IMAGE} AS build-cpu
FROM ${CUDA_IMAGE} AS build-cuda

FROM build-${VARIANT} AS build
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /src
# What the server's build and its end-to-end tests need; `all` when
# CTEST_ARGS asks for more tests.
ARG CHUNKPLAN_DEPS=server
COPY scripts/install-deps.sh scripts/
RUN scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
ARG CTEST_ARGS="-L server"
ARG BUILD_TARGETS="chunkplan-server chunkplan chunkplan_python chunkplan-held-server"
# 1: build only, no test (CI: scripts/test.sh ran every test on the same
# objects before; deploy/podman-build.sh passes SKIP_TESTS through).
ARG SKIP_TESTS=0
# A ccache directory mounted into the build (deploy/podman-build.sh does
# where CCACHE_DIR is set): the build tree is /src/build, as on the host,
# so that its paths relative to CCACHE_BASEDIR match the host's.
ARG CCACHE_DIR=""
# ccache hashes these: deploy/podman-build.sh passes the host's, where set.
ARG LANG
ARG LC_ALL
ARG LC_CTYPE
ARG LC_MESSAGES
RUN BUILD_DIR=/src/build CTEST_ARGS="${CTEST_ARGS}" CCACHE_BASEDIR=/src \
    BUILD_TARGETS="${BUILD_TARGETS}" SKIP_TESTS="${SKIP_TESTS}" scripts/test.sh
# The binaries and every shared library they load, under the name they are
# loaded by, in the real directory (/lib is a link to /usr/lib: copying it
# as a directory would hide the base's C library), except the C library's
# own, which the runtime base has.
RUN set -eu; \
    mkdir -p /out/usr/local/bin; \
    cp /src/build/bin/chunkplan-server /src/build/bin/chunkplan /out/usr/local/bin/; \
    ldd /src/build/bin/chunkplan-server /src/build/bin/chunkplan \
      | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u \
      | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' \
      | while read -r lib; do \
          dir="/out$(realpath "$(dirname "$lib")")"; \
          mkdir -p "$dir"; cp -L "$lib" "$dir/"; \
        done; \
    /out/usr/local/bin/chunkplan-server --version

FROM ${DEBIAN_RUNTIME_IMAGE} AS runtime-cpu
FROM ${CUDA_RUNTIME_IMAGE} AS runtime-cuda

FROM runtime-${VARIANT}
COPY --from=build /out/ /
# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 65532:65532
# 50051: gRPC (chunkplan.v1.ChunkSearch, health, reflection);
# 9090: Prometheus metrics at /metrics.
EXPOSE 50051 9090
ENTRYPOINT ["/usr/local/bin/chunkplan-server", "--listen=0.0.0.0:50051"]
CMD ["--metrics_listen=0.0.0.0:9090"]
