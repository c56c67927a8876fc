// Package testkit holds the helpers the project's tests share, once, by
// topic:
//
//   - shared.go: the material read at run time from the shared folder beside
//     the checkout (AHP conformance fixtures, native-hook fixtures); tests
//     skip without it unless AHP_REQUIRE_SHARED=1.
//   - long.go: the gate of the slow tests (AHP_LONG_TESTS=1).
//   - events.go: AHP events in the seed shape, for tables to vary.
//   - json.go: comparing JSON documents by value.
//   - certs.go: self-signed certificates for TLS tests.
//   - buffer.go: a buffer safe for concurrent writers.
//   - tree.go: directory snapshots, to show code changed nothing it must not.
//   - imports.go: a package's import boundary.
//
// It imports only the standard library, so that any package's tests may
// use it without an import cycle.
package testkit
