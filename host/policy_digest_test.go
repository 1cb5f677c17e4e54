package host

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// fmtPolicyDigest is policyDigest as it was written with fmt: the
// digests recorded for `cairn verify` by every earlier cairn.
func fmtPolicyDigest(p sandbox.Policy) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mem=%d timeout=%d in=%d out=%d err=%d files=%d staging=%d paths=%d clock=%t rand=%t\n",
		p.MemoryLimit, p.Timeout, p.StdinLimit, p.StdoutLimit, p.StderrLimit, p.MaxOpenFiles,
		p.StagingLimit, p.MaxStagedPaths, p.RealClock, p.RealRandom)
	fmt.Fprintf(&b, "imports=%q args=%q env=%q\n", p.Imports, p.Args, sortedKeys(p.Env))
	for _, m := range p.Mounts {
		fmt.Fprintf(&b, "mount %s ro=%t\n", m.GuestPath, m.ReadOnly)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return fmt.Sprintf("sha256:%x", sum)
}

// A policy's digest is what every earlier cairn recorded for it, or a
// recorded call would fail verify after an upgrade.
func TestPolicyDigestIsUnchanged(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "a", `q"uote`, "tab\there", "ünï", "\x00\xff", "/workspace", "fd_read"}
	pick := func() []string {
		var out []string
		for range r.IntN(4) {
			out = append(out, texts[r.IntN(len(texts))])
		}
		return out
	}
	for i := range 2000 {
		p := sandbox.Policy{MemoryLimit: r.Int64() >> r.IntN(64), Timeout: time.Duration(r.Int64N(1e12)) - 5,
			StdinLimit: -r.Int64N(9), StdoutLimit: r.Int64N(1 << 30), StderrLimit: r.Int64N(3), MaxOpenFiles: r.IntN(100) - 1,
			StagingLimit: r.Int64(), MaxStagedPaths: r.IntN(1 << 20), RealClock: r.IntN(2) == 0, RealRandom: r.IntN(2) == 0,
			Imports: pick(), Args: pick()}
		if i%3 == 0 {
			p.Env = map[string]string{}
			for _, k := range pick() {
				p.Env[k] = "v"
			}
		}
		for _, g := range pick() {
			p.Mounts = append(p.Mounts, sandbox.Mount{GuestPath: g, HostPath: "/h" + g, ReadOnly: r.IntN(2) == 0})
		}
		if got, want := policyDigest(p), fmtPolicyDigest(p); got != want {
			t.Fatalf("policy %+v: digest %s, want %s", p, got, want)
		}
	}
}
