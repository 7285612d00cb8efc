#!/bin/sh
# Regenerates triton/pb from the .proto files in this folder. Run from triton/
# (go generate does). The protoc plugins are built from the versions pinned by
# go.mod's tool directives, so output does not depend on what is on PATH.
set -eu
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
go build -o "$bin/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc
PATH="$bin:$PATH" protoc -I proto \
  --go_out=pb --go_opt=paths=source_relative \
  --go-grpc_out=pb --go-grpc_opt=paths=source_relative \
  grpc_service.proto model_config.proto
