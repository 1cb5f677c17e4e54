package overlay_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// A file written back with the content it had, a file made and removed,
// and a directory removed and made again are no effect; the effects that
// remain are exact.
func TestEffectsDropNoOps(t *testing.T) {
	ws := t.TempDir()
	makeTree(t, ws, map[string]string{"same.txt": "same", "d/": "", "gone.txt": "g"})
	ov, _ := newOverlay(t, ws)
	ovprog(t, sandbox.Mount{Overlay: ov}, "write:/work/same.txt:other", "write:/work/same.txt:same",
		"write:/work/tmp.txt:t", "rm:/work/tmp.txt", "mkdir:/work/tmpdir", "rmdir:/work/tmpdir",
		"rmdir:/work/d", "mkdir:/work/d", "rm:/work/gone.txt", "write:/work/gone.txt:g2")
	effects, err := ov.Effects()
	must(t, err)
	want := overlay.Effects{{Path: "gone.txt", Op: overlay.OpWrite, Base: fileV("g"), New: fileV("g2"), Mode: 0o644}}
	if !reflect.DeepEqual(effects, want) {
		t.Fatalf("effects:\n got %+v\nwant %+v", effects, want)
	}
}

// A manifest survives Marshal and overlay.DecodeEffects unchanged, as the same
// bytes every time.
func TestEffectsRoundTrip(t *testing.T) {
	es := overlay.Effects{
		{Path: "a", Op: overlay.OpMkdir, New: overlay.DirVersion, Mode: 0o755},
		{Path: "a/f.txt", Op: overlay.OpWrite, New: fileV("new"), Mode: 0o644},
		{Path: "b.txt", Op: overlay.OpDelete, Base: fileV("old")},
		{Path: "c", Op: overlay.OpRmdir, Base: overlay.DirVersion},
		{Path: "d", Op: overlay.OpWrite, Base: overlay.DirVersion, New: fileV(""), Mode: 0o600},
	}
	b, err := es.Marshal()
	must(t, err)
	got, err := overlay.DecodeEffects(b)
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
// handed to overlay.Check and overlay.Apply.
func TestEffectsValidate(t *testing.T) {
	w := func(p string) overlay.Effect { return overlay.Effect{Path: p, Op: overlay.OpWrite, New: fileV("x")} }
	for name, es := range map[string]overlay.Effects{
		"empty path":      {w("")},
		"dot":             {w(".")},
		"absolute":        {w("/etc/passwd")},
		"dotdot":          {w("../out")},
		"inner dotdot":    {w("a/../b")},
		"unclean":         {w("a//b")},
		"reserved":        {w("d/.cairn-apply-0011")},
		"unsorted":        {w("b"), w("a")},
		"repeated":        {w("a"), w("a")},
		"no-op":           {{Path: "a", Op: overlay.OpWrite, Base: fileV("x"), New: fileV("x")}},
		"write to dir":    {{Path: "a", Op: overlay.OpWrite, New: overlay.DirVersion}},
		"delete a dir":    {{Path: "a", Op: overlay.OpDelete, Base: overlay.DirVersion}},
		"rmdir a file":    {{Path: "a", Op: overlay.OpRmdir, Base: fileV("x")}},
		"unknown op":      {{Path: "a", Op: "chown", New: fileV("x")}},
		"hash on dir":     {{Path: "a", Op: overlay.OpMkdir, New: overlay.Version{Exists: true, Dir: true, Size: 3}}},
		"mode bits":       {{Path: "a", Op: overlay.OpWrite, New: fileV("x"), Mode: 0o4755}},
		"inside a file":   {w("a"), w("a/b")},
		"inside a delete": {{Path: "a", Op: overlay.OpRmdir, Base: overlay.DirVersion}, w("a/b")},
	} {
		if err := es.Validate(); !errors.Is(err, overlay.ErrBadManifest) {
			t.Errorf("%s: Validate: %v", name, err)
		}
		b, err := es.Marshal()
		must(t, err)
		if _, err := overlay.DecodeEffects(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
		if _, err := overlay.Check(t.TempDir(), es); !errors.Is(err, overlay.ErrBadManifest) {
			t.Errorf("%s: Check: %v", name, err)
		}
	}
}

// Bytes that are not a whole manifest are refused, never a panic.
func TestDecodeEffectsCorrupt(t *testing.T) {
	good, err := overlay.Effects{{Path: "a.txt", Op: overlay.OpWrite, New: fileV("x"), Mode: 0o644}}.Marshal()
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
		if _, err := overlay.DecodeEffects(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzDecodeEffects: any bytes decode to a valid manifest that encodes
// and decodes to itself, or fail; none panics.
//
//	go test ./sandbox/overlay -run '^$' -fuzz FuzzDecodeEffects -fuzztime 30s
func FuzzDecodeEffects(f *testing.F) {
	for _, es := range []overlay.Effects{
		{{Path: "a.txt", Op: overlay.OpWrite, Base: fileV("a"), New: fileV("b"), Mode: 0o644}},
		{{Path: "d", Op: overlay.OpMkdir, New: overlay.DirVersion, Mode: 0o755}, {Path: "d/f", Op: overlay.OpWrite, New: fileV("")}},
		{{Path: "x", Op: overlay.OpRmdir, Base: overlay.DirVersion}},
	} {
		b, err := es.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := overlay.DecodeEffects(b)
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
		es2, err := overlay.DecodeEffects(again)
		if err != nil || !reflect.DeepEqual(es, es2) {
			t.Fatalf("re-decoding: %v\n%+v\n%+v", err, es, es2)
		}
	})
}
