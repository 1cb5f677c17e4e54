package sandbox

import (
	"errors"
	"reflect"
	"testing"
)

// A file written back with the content it had, a file made and removed,
// and a directory removed and made again are no effect; the effects that
// remain are exact.
func TestEffectsDropNoOps(t *testing.T) {
	ws := t.TempDir()
	makeTree(t, ws, map[string]string{"same.txt": "same", "d/": "", "gone.txt": "g"})
	ov, _ := newOverlay(t, ws)
	ovprog(t, Mount{Overlay: ov}, "write:/work/same.txt:other", "write:/work/same.txt:same",
		"write:/work/tmp.txt:t", "rm:/work/tmp.txt", "mkdir:/work/tmpdir", "rmdir:/work/tmpdir",
		"rmdir:/work/d", "mkdir:/work/d", "rm:/work/gone.txt", "write:/work/gone.txt:g2")
	effects, err := ov.Effects()
	must(t, err)
	want := Effects{{Path: "gone.txt", Op: OpWrite, Base: fileV("g"), New: fileV("g2"), Mode: 0o644}}
	if !reflect.DeepEqual(effects, want) {
		t.Fatalf("effects:\n got %+v\nwant %+v", effects, want)
	}
}

// A manifest survives Marshal and DecodeEffects unchanged, as the same
// bytes every time.
func TestEffectsRoundTrip(t *testing.T) {
	es := Effects{
		{Path: "a", Op: OpMkdir, New: dirVersion, Mode: 0o755},
		{Path: "a/f.txt", Op: OpWrite, New: fileV("new"), Mode: 0o644},
		{Path: "b.txt", Op: OpDelete, Base: fileV("old")},
		{Path: "c", Op: OpRmdir, Base: dirVersion},
		{Path: "d", Op: OpWrite, Base: dirVersion, New: fileV(""), Mode: 0o600},
	}
	b, err := es.Marshal()
	must(t, err)
	got, err := DecodeEffects(b)
	must(t, err)
	if !reflect.DeepEqual(got, es) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, es)
	}
	again, _ := got.Marshal()
	if string(again) != string(b) {
		t.Error("the encoding is not deterministic")
	}
}

// Manifests that do not hold together are refused, whether decoded or
// handed to Check and Apply.
func TestEffectsValidate(t *testing.T) {
	w := func(p string) Effect { return Effect{Path: p, Op: OpWrite, New: fileV("x")} }
	for name, es := range map[string]Effects{
		"empty path":      {w("")},
		"dot":             {w(".")},
		"absolute":        {w("/etc/passwd")},
		"dotdot":          {w("../out")},
		"inner dotdot":    {w("a/../b")},
		"unclean":         {w("a//b")},
		"reserved":        {w("d/.cairn-apply-0011")},
		"unsorted":        {w("b"), w("a")},
		"repeated":        {w("a"), w("a")},
		"no-op":           {{Path: "a", Op: OpWrite, Base: fileV("x"), New: fileV("x")}},
		"write to dir":    {{Path: "a", Op: OpWrite, New: dirVersion}},
		"delete a dir":    {{Path: "a", Op: OpDelete, Base: dirVersion}},
		"rmdir a file":    {{Path: "a", Op: OpRmdir, Base: fileV("x")}},
		"unknown op":      {{Path: "a", Op: "chown", New: fileV("x")}},
		"hash on dir":     {{Path: "a", Op: OpMkdir, New: Version{Exists: true, Dir: true, Size: 3}}},
		"mode bits":       {{Path: "a", Op: OpWrite, New: fileV("x"), Mode: 0o4755}},
		"inside a file":   {w("a"), w("a/b")},
		"inside a delete": {{Path: "a", Op: OpRmdir, Base: dirVersion}, w("a/b")},
	} {
		if err := es.Validate(); !errors.Is(err, ErrBadManifest) {
			t.Errorf("%s: Validate: %v", name, err)
		}
		b, err := es.Marshal()
		must(t, err)
		if _, err := DecodeEffects(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
		if _, err := Check(t.TempDir(), es); !errors.Is(err, ErrBadManifest) {
			t.Errorf("%s: Check: %v", name, err)
		}
	}
}

// Bytes that are not a whole manifest are refused, never a panic.
func TestDecodeEffectsCorrupt(t *testing.T) {
	good, err := Effects{{Path: "a.txt", Op: OpWrite, New: fileV("x"), Mode: 0o644}}.Marshal()
	must(t, err)
	for name, b := range map[string][]byte{
		"empty":      nil,
		"truncated":  good[:len(good)-3],
		"junk tail":  append(append([]byte{}, good...), 0x00),
		"not array":  {0xa0},
		"indefinite": {0x9f, 0xff},
		"long hash": {0x81, 0xa3, 0x01, 0x61, 'a', 0x02, 0x65, 'w', 'r', 'i', 't', 'e',
			0x04, 0xa2, 0x01, 0xf5, 0x03, 0x58, 0x21},
	} {
		if _, err := DecodeEffects(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzDecodeEffects: any bytes decode to a valid manifest that encodes
// and decodes to itself, or fail; none panics.
//
//	go test ./sandbox -run '^$' -fuzz FuzzDecodeEffects -fuzztime 30s
func FuzzDecodeEffects(f *testing.F) {
	for _, es := range []Effects{
		{{Path: "a.txt", Op: OpWrite, Base: fileV("a"), New: fileV("b"), Mode: 0o644}},
		{{Path: "d", Op: OpMkdir, New: dirVersion, Mode: 0o755}, {Path: "d/f", Op: OpWrite, New: fileV("")}},
		{{Path: "x", Op: OpRmdir, Base: dirVersion}},
	} {
		b, err := es.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := DecodeEffects(b)
		if err != nil {
			return
		}
		if err := es.Validate(); err != nil {
			t.Fatalf("decoded an invalid manifest: %v", err)
		}
		again, err := es.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		es2, err := DecodeEffects(again)
		if err != nil || !reflect.DeepEqual(es, es2) {
			t.Fatalf("re-decoding: %v\n%+v\n%+v", err, es, es2)
		}
	})
}
