//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"reflect"
	"testing"
)

// usedPages, which compares only the pages the page table says a call
// wrote, finds what comparing every page with the image finds.
func TestUsedPagesAgreesWithAFullComparison(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t)}
	probe(t, m, p, `{}`)
	m.r.bg.Wait()
	snap := snapshotOf(t, m, p)
	ctx := context.Background()
	cm, err := m.compiledFor(ctx, p.memoryPages())
	must(t, err)
	rt, err := m.runtime(ctx, p.memoryPages())
	must(t, err)
	cfg := detClock(snapshotConfig(p).WithStdin(bytes.NewReader(warmUpRequest)), snap.clockReadings, nil)
	mod, err := m.restored(ctx, rt, cm, cfg, snap, false)
	if mod != nil {
		defer mod.Close(ctx)
	}
	must(t, err)
	must(t, m.callExport(ctx, mod))
	mem, _ := mod.Memory().Read(0, mod.Memory().Size())
	read, written := snap.usedPages(mem)
	if len(written) == 0 {
		t.Fatal("the call wrote no page of the snapshot")
	}
	img := snap.image.bytes()
	n := uint64(min(len(img), len(mem))) / osPage * osPage
	resident := residentPages(mem[:n])
	var wantRead, wantWritten []pageRange
	for off := uint64(0); off < n; off += osPage {
		switch {
		case !bytes.Equal(img[off:off+osPage], mem[off:off+osPage]):
			wantWritten = appendPage(wantWritten, off)
		case resident != nil && resident[off/osPage]:
			wantRead = appendPage(wantRead, off)
		}
	}
	if !reflect.DeepEqual(written, wantWritten) || !reflect.DeepEqual(read, wantRead) {
		t.Fatalf("usedPages: %d runs read, %d written; a full comparison: %d and %d", len(read), len(written), len(wantRead), len(wantWritten))
	}
}
