//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Regression for idle memories that were never unmapped (x/sys/unix's
// Munmap refuses a mapping the syscall package made): after Trim, no
// memory of the process maps a dropped snapshot's image any more, neither
// the instances' memories nor, once collected, the image's own view.
func TestTrimUnmapsSnapshotImages(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t)}
	probe(t, m, p, `{}`)
	m.r.bg.Wait()
	var st unix.Stat_t
	must(t, unix.Fstat(snapshotOf(t, m, p).image.fd, &st))
	if n := mappingsOf(t, st.Ino); n == 0 {
		t.Fatal("no mapping of the snapshot's image after a call")
	}
	m.r.Trim()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for mappingsOf(t, st.Ino) > 0 {
		if ctx.Err() != nil {
			t.Fatalf("after Trim, %d mappings of the snapshot's image are left:\n%s", mappingsOf(t, st.Ino), readMaps(t))
		}
		runtime.GC() // the view goes with the image (see newMemoryImage)
		time.Sleep(10 * time.Millisecond)
	}
}

// mappingsOf counts the mappings of this process of the memfd of inode ino.
func mappingsOf(t *testing.T, ino uint64) int {
	n := 0
	for _, l := range strings.Split(readMaps(t), "\n") {
		if f := strings.Fields(l); len(f) >= 6 && f[4] == fmt.Sprint(ino) && strings.Contains(l, "memfd:cairn-snapshot") {
			n++
		}
	}
	return n
}

func readMaps(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/maps")
	must(t, err)
	return string(b)
}
