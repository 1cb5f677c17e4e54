// Package install holds the tests of what a user installs and runs from
// outside the checkout: README's `go install` of the module, from a
// module proxy, its `go build` in a copy of the checkout, and its fuzz
// command, each run as written. Each builds cairn or
// instrumented packages from nothing, the better part of a minute, so
// they are a package of their own, which `go test ./...` runs beside
// cmd/cairn's tests rather than after them. The package has no code.
package install
