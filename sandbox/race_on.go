//go:build race

package sandbox

// raceSlowdown is how many times longer than a normal build a build with
// the race detector takes to compile a module, and so how much longer its
// DefaultCompileTimeout is: a Go-built tool then takes tens of seconds.
const raceSlowdown = 10
