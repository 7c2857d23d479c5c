//go:build !race

package archetype_test

const raceEnabled = false
