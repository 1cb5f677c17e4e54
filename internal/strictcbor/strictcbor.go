// Package strictcbor makes the hardened CBOR decoder that every decoder of
// untrusted or stored bytes in cairn uses: the tool ABI's messages, the
// journal and snapshots, and a call's effects manifest. It rejects
// duplicate map keys, indefinite lengths and invalid UTF-8, and bounds
// nesting, array lengths and map sizes by what each format needs, so that
// hostile or damaged bytes cannot make a reader allocate without limit.
// StoredDecMode is the decoder of what cairn wrote itself, which keeps
// text that is not UTF-8 as its bytes.
// Unknown map keys are ignored, so that newer minor fields do not break
// older readers. RATIONALE.md says why CBOR and why these options.
package strictcbor

import "github.com/fxamacker/cbor/v2"

// Limits bound a decoder: the depth of nesting, the elements of one array
// and the pairs of one map.
type Limits struct {
	Depth, Elements, Pairs int
}

// DecMode is the strict decoder within lim. Limits the CBOR library does
// not accept (below its minimums) panic: they are constants of the caller.
func DecMode(lim Limits) cbor.DecMode {
	return Must(Options(lim).DecMode())
}

// StoredDecMode is DecMode for bytes cairn wrote itself (the journal,
// snapshots, pasts, a call's effects manifest), except that a text string
// that is not UTF-8 is read as its bytes rather than refused. Those hold
// the names of a workspace's files, and on Linux a name is bytes, not
// always UTF-8: Go's encoder writes such a string as text as it is, and
// a reader that refused it would leave an agent whose workspace has a
// Latin-1 name unreadable after the round that named it. A name must come
// back byte for byte, to reach its file, so it is not replaced with
// U+FFFD either. What a stored string becomes elsewhere (JSON, a
// terminal, a model's request) is made UTF-8 where it is written.
func StoredDecMode(lim Limits) cbor.DecMode {
	opts := Options(lim)
	opts.UTF8 = cbor.UTF8DecodeInvalid
	return Must(opts.DecMode())
}

// Options are the strict decoder's options within lim, for a caller that
// must loosen one of them (and says why where it does).
func Options(lim Limits) cbor.DecOptions {
	return cbor.DecOptions{
		DupMapKey:        cbor.DupMapKeyEnforcedAPF,
		IndefLength:      cbor.IndefLengthForbidden,
		MaxNestedLevels:  lim.Depth,
		MaxArrayElements: lim.Elements,
		MaxMapPairs:      lim.Pairs,
		UTF8:             cbor.UTF8RejectInvalid,
	}
}

// Must unwraps a mode built from constant options, which cannot fail.
func Must[M any](m M, err error) M {
	if err != nil {
		panic(err)
	}
	return m
}
