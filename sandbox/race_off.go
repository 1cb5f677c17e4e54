//go:build !race

package sandbox

// raceSlowdown is 1 without the race detector (see race_on.go).
const raceSlowdown = 1
