// Package kserve is the vocabulary of Triton's KServe v2 wire that both
// sides of it speak: the client (package triton) and the simulator (package
// sim). It holds the JSON bodies of the HTTP API, the datatypes and their
// element sizes, the framing of BYTES data, and Triton's error codes with
// their gRPC and HTTP forms. It knows nothing of connections or of models:
// the client and the simulator import it and never each other, so that
// neither can lean on the other's behaviour and hide a wire mismatch.
package kserve
