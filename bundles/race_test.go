//go:build race

package bundles_test

// raceEnabled scales long tests down under the race detector, which makes
// compilation several times slower.
const raceEnabled = true
