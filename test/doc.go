// Package test holds the black-box tests and benchmarks of the ahp-opa
// binary: they build cmd/ahp-opa once, drive `serve --stdio` and `eval`
// through pipes, and check every reply against the AHP wire contract
// (../shared/ahp/PROTOCOL.md, rule ids B-…) and the official conformance
// fixtures and JSON Schemas.
//
// The shared material is looked up at ../../shared/ahp relative to this
// directory, or wherever AHP_SHARED_DIR points. Tests that need it skip
// when it is missing, unless AHP_REQUIRE_SHARED=1 makes that a failure.
// AHP_OPA_BIN, when set, names a prebuilt binary to test instead of
// building one; otherwise the binary is built into the user cache
// directory (ahp-opa-test/), where go build skips the link when nothing
// changed.
//
// The tests run in parallel: each one starts its own processes, listens on
// 127.0.0.1:0 and passes environment to its children explicitly, so a new
// test must not use t.Setenv, a fixed port or the working directory.
package test
