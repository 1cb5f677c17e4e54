package main

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// Regression: `cairn events` read the agent's event history on its own and
// printed it, exit 0, for an agent every other command refuses: a journal
// damaged inside what was committed, one cut short of its commit mark, one
// of a newer schema; so did `cairn diff`. Both now refuse such an agent
// as `cairn show` does,
// with the same message and exit code, prints nothing and changes nothing.
func TestEventsRefusesAnUnreadableAgent(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		damage     func(journal []byte) []byte
	}{
		{"corrupt", "is corrupt at offset", func(j []byte) []byte {
			j[frameEnds(j)[1]+12] ^= 0xff // a record of round 1, which later commits follow
			return j
		}},
		{"cut below its commit mark", "lost committed data", func(j []byte) []byte { return j[:frameEnds(j)[1]] }},
		{"newer schema", "has schema version 99", futureHeader},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := t.TempDir()
			if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "ev", "-f", crashAgent(t)); code != exitDone {
				t.Fatalf("run: exit %d\n%s", code, errOut)
			}
			if code, out, errOut := cairn(t, "events", "--store", store, "ev"); code != exitDone || !strings.Contains(out, "done after") {
				t.Fatalf("events before the damage: exit %d\n%s%s", code, out, errOut)
			}
			dir := filepath.Join(store, "agents", "ev")
			journals, err := filepath.Glob(filepath.Join(dir, "journal-*.log"))
			must(t, err)
			sort.Strings(journals)
			journal := journals[len(journals)-1]
			data, err := os.ReadFile(journal)
			must(t, err)
			must(t, os.WriteFile(journal, tt.damage(data), 0o600))
			before := dirBytes(t, dir)

			showCode, _, showErr := cairn(t, "show", "--store", store, "ev")
			if showCode == exitDone || !strings.Contains(showErr, tt.want) {
				t.Fatalf("show of the damaged agent: exit %d, %q; want a refusal saying %q", showCode, showErr, tt.want)
			}
			for _, args := range [][]string{{"events"}, {"events", "--json"}} {
				code, out, errOut := cairn(t, append(args, "--store", store, "ev")...)
				if code != showCode || errOut != showErr || out != "" {
					t.Errorf("cairn %s of the damaged agent: exit %d, stderr %q, %d bytes of stdout; want show's exit %d and %q, nothing printed",
						strings.Join(args, " "), code, errOut, len(out), showCode, showErr)
				}
			}
			// cairn diff read the kept changes alone and printed them, exit 0.
			if code, out, errOut := cairn(t, "diff", "--store", store, "ev"); code != showCode || !strings.Contains(errOut, tt.want) || out != "" {
				t.Errorf("cairn diff of the damaged agent: exit %d, stderr %q, %d bytes of stdout; want show's exit %d saying %q, nothing printed",
					code, errOut, len(out), showCode, tt.want)
			}
			if dirBytes(t, dir) != before {
				t.Fatal("events or diff changed the agent it refused")
			}
		})
	}
}

// futureHeader gives a journal's header frame a schema newer than any
// cairn reads, its checksum right (the frame layout is in checkpoint's
// package doc).
func futureHeader(j []byte) []byte {
	n := binary.LittleEndian.Uint32(j)
	var rec map[uint64]any
	if err := cbor.Unmarshal(j[9:9+n], &rec); err != nil {
		panic(err)
	}
	rec[11].(map[any]any)[uint64(1)] = uint64(99) // Record.Header.Schema
	payload, err := cbor.Marshal(rec)
	if err != nil {
		panic(err)
	}
	h := make([]byte, 9, 9+len(payload))
	binary.LittleEndian.PutUint32(h, uint32(len(payload)))
	h[4] = j[4]
	table := crc32.MakeTable(crc32.Castagnoli)
	binary.LittleEndian.PutUint32(h[5:], crc32.Update(crc32.Checksum(h[:5], table), table, payload))
	return append(append(h, payload...), j[9+n:]...)
}
