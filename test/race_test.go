//go:build race

package test

// raceEnabled is true when the tests run with -race; the binary under test
// is then built with -race too, so that data races in the server fail the
// tests that drive it.
const raceEnabled = true
