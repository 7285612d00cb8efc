package triton

// The generated code in pb/ is checked in; regenerate it with Debian's protoc
// (apt-get install protobuf-compiler) and the plugin versions pinned by the
// tool directives in go.mod: go generate ./triton/...

//go:generate sh proto/gen.sh
