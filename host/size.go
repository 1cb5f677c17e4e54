package host

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Size is a number of bytes written in YAML as "64MiB", "512KiB", "1GiB" or
// a plain number of bytes.
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// maxSize is the most bytes a size in an agent file holds.
const maxSize = 1 << 62

// ParseSize reads a size such as "64MiB" of at most 1<<62 bytes, as an
// agent file's sizes are read (see ParseSizeUpTo).
func ParseSize(s string) (Size, error) { return ParseSizeUpTo(s, maxSize) }

// ParseSizeUpTo reads a size such as "64MiB": a whole number of bytes,
// with an optional unit (KiB, MiB, GiB, KB, MB, GB or B), of at most
// largest bytes. Spaces around it and before its unit are left out. The
// command line reads its sizes with it, up to what an int64 holds.
//
// # Errors
//
// A size that is not a whole number, 0 or more, with an optional unit;
// and a *SizeTooLargeError for one of more than largest bytes, naming the
// largest in its unit.
func ParseSizeUpTo(s string, largest int64) (Size, error) {
	s = strings.TrimSpace(s)
	num, unit, mult := s, "", int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, unit, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.suffix, u.mult
			break
		}
	}
	most := largest / mult
	n, err := strconv.ParseInt(num, 10, 64)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(num, "-") || err == nil && n > most {
		return 0, &SizeTooLargeError{Size: s, Largest: strconv.FormatInt(most, 10) + unit}
	}
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a whole number with an optional unit (KiB, MiB, GiB)", s)
	}
	return Size(n * mult), nil
}

// SizeTooLargeError is a size of more bytes than cairn counts.
type SizeTooLargeError struct {
	Size    string // as written
	Largest string // the largest size in its unit, such as "4294967296GiB"
}

func (e *SizeTooLargeError) Error() string {
	return fmt.Sprintf("size %q: more bytes than cairn counts; the largest is %s", e.Size, e.Largest)
}

// UnmarshalYAML reads a size.
func (z *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*z = v
	return nil
}

// String writes the size in the largest binary unit that divides it.
func (z Size) String() string {
	for _, u := range sizeUnits[:3] {
		if z != 0 && int64(z)%u.mult == 0 {
			return fmt.Sprintf("%d%s", int64(z)/u.mult, u.suffix)
		}
	}
	return strconv.FormatInt(int64(z), 10)
}
