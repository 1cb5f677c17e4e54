package checkpoint

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"

	"github.com/fxamacker/cbor/v2"

	"github.com/cairnrun/cairn/internal/strictcbor"
)

// maxRecordSize bounds one frame's payload, so a damaged length cannot make
// a reader allocate without limit. The writers hold to it too: a record or
// state that encodes larger is refused with ErrRecordTooLarge, never
// written as a frame every later read would take for damage.
const maxRecordSize = 64 << 20

var (
	encMode cbor.EncMode = payloadEncMode{strictcbor.Must(cbor.EncOptions{
		Sort:          cbor.SortCoreDeterministic,
		ShortestFloat: cbor.ShortestFloat16,
		NaNConvert:    cbor.NaNConvert7e00,
		InfConvert:    cbor.InfConvertFloat16,
		IndefLength:   cbor.IndefLengthForbidden,
		Time:          cbor.TimeRFC3339Nano,
	}.UserBufferEncMode())}
	decMode = strictcbor.StoredDecMode(strictcbor.Limits{Depth: 24, Elements: 1 << 24, Pairs: 1 << 20})
)

// ErrRecordTooLarge is a record, or an agent's state, that encodes to more
// than one frame may hold (maxRecordSize, 64 MiB). Nothing of it was
// written: the journal and snapshots are as they were.
var ErrRecordTooLarge = errors.New("too large for a journal frame")

// checkPayload refuses a frame payload of n bytes past maxRecordSize.
func checkPayload(what string, n int) error {
	if n > maxRecordSize {
		return fmt.Errorf("%w: %s encodes to %d bytes, more than the %d a frame holds; nothing of it was written",
			ErrRecordTooLarge, what, n, maxRecordSize)
	}
	return nil
}

// payloadEncMode is the encoder of frame payloads: as its mode, except that
// MarshalToBuffer, with which every journal and past frame's payload is
// encoded in place (appendEncodedFrame), refuses a payload past
// maxRecordSize and leaves buf as it was. Marshal is unbounded: it also
// encodes what is not a frame (archives, manifests), and encodeRecord and
// encodeState check what it makes of a frame's payload.
type payloadEncMode struct{ cbor.UserBufferEncMode }

func (m payloadEncMode) MarshalToBuffer(v any, buf *bytes.Buffer) error {
	start := buf.Len()
	if err := m.UserBufferEncMode.MarshalToBuffer(v, buf); err != nil {
		return err
	}
	if err := checkPayload("the record", buf.Len()-start); err != nil {
		buf.Truncate(start)
		return err
	}
	return nil
}

// ErrFutureSchema is matched by a *FutureSchemaError.
var ErrFutureSchema = errors.New("written by a newer version of cairn")

// FutureSchemaError is a journal or snapshot of a schema newer than this
// build reads. The files are left as they are.
type FutureSchemaError struct {
	File      string
	Version   int
	Supported int
}

func (e *FutureSchemaError) Error() string {
	return fmt.Sprintf("%s has schema version %d, this cairn reads up to %d: upgrade cairn to open it (it is left unchanged)",
		e.File, e.Version, e.Supported)
}

// Is makes errors.Is(err, ErrFutureSchema) hold.
func (e *FutureSchemaError) Is(target error) bool { return target == ErrFutureSchema }

// ErrCorrupt is matched by a *CorruptError.
var ErrCorrupt = errors.New("corrupt")

// CorruptError is damage that is not a torn tail: something valid follows
// it, so dropping it would lose data.
//
// Offset is where in File the damage is, or -1 when the reader does not
// know; Advice says what to do, when the default (restore the file from a
// backup, or move the agent aside) does not fit, as for a file to import.
type CorruptError struct {
	File   string
	Offset int64
	Reason string
	Advice string
}

func (e *CorruptError) Error() string {
	at := ""
	if e.Offset >= 0 {
		at = fmt.Sprintf(" at offset %d", e.Offset)
	}
	advice := cmp.Or(e.Advice, "nothing was changed — restore the file from a backup or move the agent aside")
	return fmt.Sprintf("%s is corrupt%s: %s; %s", e.File, at, e.Reason, advice)
}

// Is makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func encodeRecord(rec Record) ([]byte, error) {
	if rec.Type == RecState {
		return nil, errors.New("a state is written with encodeState")
	}
	b, err := encMode.Marshal(rec)
	if err != nil {
		return nil, err
	}
	if err := checkPayload("the "+rec.Type.String()+" record", len(b)); err != nil {
		return nil, err
	}
	return b, nil
}

func decodeRecord(t RecordType, payload []byte) (Record, error) {
	var rec Record
	if t == 0 || t >= recTypeLimit && t != RecExchange && t != RecCompaction || t == RecState {
		return rec, fmt.Errorf("unknown %s", t)
	}
	if err := decMode.Unmarshal(payload, &rec); err != nil {
		return rec, err
	}
	rec.Type = t
	if rec.Message != nil {
		rec.Message.Intern()
	}
	if rec.Result != nil {
		rec.Result.Recording.Intern()
	}
	return rec, checkRecord(rec)
}

// checkRecord refuses records that lack what replay dereferences.
func checkRecord(rec Record) error {
	missing := func(what string) error { return fmt.Errorf("%s record without %s", rec.Type, what) }
	switch rec.Type {
	case RecHeader:
		if rec.Header == nil {
			return missing("header")
		}
	case RecRunStarted, RecRunEnded:
		if rec.Run == nil {
			return missing("run")
		}
	case RecUser, RecTurn:
		if rec.Message == nil {
			return missing("message")
		}
	case RecResult:
		if rec.Result == nil {
			return missing("result")
		}
	case RecDefine:
		if rec.Definition == nil {
			return missing("definition")
		}
	case RecFiles:
		if len(rec.Files) == 0 {
			return missing("files")
		}
	case RecExchange:
		if rec.Exchange == nil {
			return missing("exchange")
		}
	case RecCompaction:
		if rec.Compaction == nil {
			return missing("compaction")
		}
	}
	return nil
}

// encodeState is a snapshot's payload.
//
// # Errors
//
// ErrRecordTooLarge for a state past maxRecordSize.
func encodeState(st *State) ([]byte, error) {
	b, err := encMode.Marshal(st)
	if err != nil {
		return nil, err
	}
	if err := checkPayload("the agent's state", len(b)); err != nil {
		return nil, err
	}
	return b, nil
}

func decodeState(payload []byte) (*State, error) {
	var st State
	if err := decMode.Unmarshal(payload, &st); err != nil {
		return nil, err
	}
	for i := range st.Messages {
		st.Messages[i].Intern()
	}
	return &st, nil
}
