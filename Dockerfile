# syntax=docker/dockerfile:1
#
# The small static image that headless tritontop workers run, for example as
# the Kubernetes Indexed Job in deploy/kubernetes/. Build it from the
# repository's root:
#
#   docker build -t tritontop:dev .
#
# The binary is static (CGO_ENABLED=0, so no NVML: the GPUs that matter are
# the server's, read from Triton's metrics) and runs as an unprivileged user
# on a distroless base with no shell.

FROM golang:1.26 AS build
WORKDIR /src
COPY . .
# The caches keep modules and compiled packages between builds; go build
# fetches only the modules the binary needs, not the test-only ones that
# `go mod download` would.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
    go build -trimpath -ldflags="-s -w" -o /out/tritontop ./cmd/tritontop

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/tritontop /usr/local/bin/tritontop
# distroless' nonroot user; numeric so that runAsNonRoot can verify it.
USER 65532:65532
# --prometheus-addr :9099 on headless workers.
EXPOSE 9099
ENTRYPOINT ["/usr/local/bin/tritontop"]
