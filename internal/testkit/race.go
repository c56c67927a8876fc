//go:build race

package testkit

// Race is set when the tests run with the race detector.
const Race = true
