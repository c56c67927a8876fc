//go:build !race

package bundles_test

const raceEnabled = false
