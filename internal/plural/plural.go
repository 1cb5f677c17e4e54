// Package plural writes a count with its noun as cairn prints it, the
// noun singular for one and plural for any other count: "1 round", "0
// rounds", "2 rounds". The CLI, the web view, and the messages of host,
// filepool and netguard share it so that none of them says "1 rounds".
// It is not part of cairn's API.
package plural

import "strconv"

// Count is n and noun: noun itself when n is 1, else its plural, which
// is many[0] when given (an irregular one: "directory", "directories"),
// else noun with an s.
func Count[N ~int | ~int32 | ~int64 | ~uint32 | ~uint64](n N, noun string, many ...string) string {
	return strconv.FormatInt(int64(n), 10) + " " + Of(n, noun, many...)
}

// Of is noun without its count: noun when n is 1, else its plural as
// Count makes it, for a count written apart ("1 of 1 step", "2 of 3
// steps").
func Of[N ~int | ~int32 | ~int64 | ~uint32 | ~uint64](n N, noun string, many ...string) string {
	switch {
	case n == 1:
		return noun
	case len(many) > 0:
		return many[0]
	}
	return noun + "s"
}
