// Package ctest tests the C regular-expression and glob matchers of the
// built-in module (regex.c, glob.c in the parent directory) against Go's
// regexp and doublestar: it compiles them with a small harness to a WASI
// module with clang, runs that in wazero, and compares answers on tables of
// cases and under fuzzing. Without clang the tests skip, unless CI=true.
package ctest
