package main

// docs/flags.md lists every subcommand's flags, made from the flag sets
// themselves by TestFlagsDoc (flagsdoc_test.go); after a change of flags,
// `go generate ./cmd/tritontop` writes it again.
//go:generate go test -count=1 -run ^TestFlagsDoc$ . -args -update-flags-doc
