package web

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/host"
)

// The browser tests run the page in a real headless Chromium. They need
// the chromium binary, so they run only when asked:
//
//	go test ./host/web -run Browser -browser [-screenshot agent.png]
var (
	browser    = flag.Bool("browser", false, "run the web view in headless Chromium")
	screenshot = flag.String("screenshot", "", "with -browser: write a screenshot of an agent page here")
)

// needsBrowser skips the test unless -browser was given.
func needsBrowser(t *testing.T) {
	t.Helper()
	if !*browser {
		t.Skip("needs -browser and a chromium binary")
	}
}

// chromium runs headless Chromium on url, lets the page's scripts run,
// and returns the DOM they left.
func chromium(t *testing.T, url string, extra ...string) string {
	t.Helper()
	needsBrowser(t)
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("-browser: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir=" + profileDir(t), "--virtual-time-budget=4000", "--window-size=390,844"}, extra...)
	if len(extra) == 0 {
		args = append(args, "--dump-dom")
	}
	out, err := exec.CommandContext(ctx, bin, append(args, url)...).Output()
	if err != nil {
		t.Fatalf("chromium %s: %v", url, err)
	}
	return string(out)
}

// profileDir is a profile directory for one Chromium run. It is not
// t.TempDir: Chromium's helper processes may still be writing to it just
// after the browser exits, so it is removed with a few tries, and one that
// will not go is left to the system's temporary directory.
func profileDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "cairn-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 20 && os.RemoveAll(dir) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}

// The agent list shows the store's agents with their status; an agent's
// page shows its timeline from the events, the call awaiting approval with
// Approve and Deny buttons, and its runs.
func TestBrowserShowsAgentsAndApprovals(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")
	f.run("w", doneAgent, doneScript)
	list := chromium(t, f.http.URL+"/#token="+f.srv.Token())
	for _, want := range []string{`data-agent="ap"`, `data-agent="w"`, "awaiting approval", ">done<"} {
		if !strings.Contains(list, want) {
			t.Errorf("agent list lacks %s:\n%s", want, list)
		}
	}
	page := chromium(t, f.http.URL+"/#token="+f.srv.Token()+"&/agent/ap")
	for _, want := range []string{`data-call="call_1_0"`, `class="approve"`, `class="deny"`, "write_file",
		"drafts/d.txt", "✓ ok", "needs approval", ">Resume<"} {
		if !strings.Contains(page, want) {
			t.Errorf("agent page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, "null") || strings.Contains(page, "undefined") {
		t.Errorf("agent page shows a missing value:\n%s", page)
	}
	if *screenshot != "" {
		chromium(t, f.http.URL+"/#token="+f.srv.Token()+"&/agent/ap", "--screenshot="+*screenshot)
		if st, err := os.Stat(*screenshot); err != nil || st.Size() == 0 {
			t.Fatalf("screenshot: %v", err)
		}
	}
}

// A read-only server's page shows the call awaiting approval but no
// button to decide it or to resume.
func TestBrowserReadOnlyHasNoButtons(t *testing.T) {
	f := newFixture(t, Config{Loopback: true, ReadOnly: true})
	f.awaiting("ap")
	page := chromium(t, f.http.URL+"/#token="+f.srv.Token()+"&/agent/ap")
	if !strings.Contains(page, `data-call="call_1_0"`) || !strings.Contains(page, "read-only") {
		t.Fatalf("read-only agent page:\n%s", page)
	}
	for _, no := range []string{`class="approve"`, `class="deny"`, ">Resume<", "<button"} {
		if strings.Contains(page, no) {
			t.Errorf("read-only page shows %s", no)
		}
	}
}

// In a real browser: the agent page of a run that is going on shows its
// new rounds as they come, without a reload; then, on an agent awaiting
// approval, a click on Approve is journaled, a click on Resume runs the
// call, and the page shows the run done.
func TestBrowserFollowsAndApproves(t *testing.T) {
	needsBrowser(t) // before the run starts, so a skip leaves none behind
	f := newFixture(t, Config{Loopback: true})
	dir := filepath.Join(f.agents, "live")
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(approvalScript), 0o644))
	af, err := host.ParseAgentFile([]byte(approvalAgent), dir)
	must(t, err)
	asked, decide, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		f.eng.Run(context.Background(), host.RunOptions{Agent: af, ID: "live", Prompt: "go",
			Approver: func(context.Context, host.ApprovalRequest) (host.Decision, error) {
				close(asked)
				<-decide
				return host.Decision{Approved: true}, nil
			}})
	}()
	<-asked
	p := openPage(t, f.http.URL+"/#token="+f.srv.Token()+"&/agent/live")
	p.waitFor("the call awaiting its decision", `document.body.innerText.includes("call_1_0 write_file needs approval")`)
	if p.eval(`document.body.innerText.includes("done after")`) == true {
		t.Fatal("the run ended before it was decided")
	}
	close(decide)
	<-ended
	p.waitFor("the run's end, without a reload", `document.body.innerText.includes("done after 2 rounds")`)

	ap := f.awaiting("ap")
	p.call(p.session, "Page.navigate", map[string]any{"url": f.http.URL + "/#/agent/ap"}, nil)
	// The page left may still show its own call_1_0 for a moment: the
	// button looked for is the one under ap's name.
	p.waitFor("ap's Approve button", `[...document.querySelectorAll("h2")].some(h => h.textContent.startsWith("ap")) &&
		document.querySelector('[data-call="call_1_0"] button.approve') !== null`)
	p.click(`[data-call="call_1_0"] button.approve`)
	p.waitFor("no call awaiting", `document.querySelector('[data-call]') === null`)
	if r := lastRecord(t, f, "ap"); r.Call != "call_1_0" || r.Phase != "approved" {
		t.Fatalf("the click journaled %+v", r)
	}
	p.waitFor("the Resume button", `[...document.querySelectorAll("button")].some(b => b.textContent === "Resume")`)
	p.eval(`[...document.querySelectorAll("button")].find(b => b.textContent === "Resume").click()`)
	p.waitFor("the resumed run's end", `document.body.innerText.includes("done after 2 rounds")`)
	f.srv.wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(ap.WorkspaceDir(), "out.txt")); string(b) != "hello" {
		t.Fatalf("out.txt = %q after Approve and Resume in the page", b)
	}
}

// In a real browser: a login link clicked on another site (here a page
// of localhost, the server being 127.0.0.1, which is another site) logs
// the tab in: the page shows the agents, the tab has the token, and no
// URL holds it.
func TestBrowserLoginFromAnotherSite(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{}) // beyond loopback: the page itself needs the cookie
	f.run("w", doneAgent, doneScript)
	link := f.http.URL + f.srv.LoginPath()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><a id="go" href="%s">cairn</a>`, link)
	}))
	defer other.Close()
	p := openPage(t, strings.Replace(other.URL, "127.0.0.1", "localhost", 1))
	p.waitFor("the other site's link", `document.getElementById("go") !== null`)
	p.click("#go")
	p.waitFor("the agents, read with the cookie", `document.querySelector('[data-agent="w"]') !== null`)
	if href := p.eval("location.href"); href != f.http.URL+"/#/" && href != f.http.URL+"/" {
		t.Errorf("the tab ended on %v", href)
	}
	if got := p.eval(`sessionStorage.getItem("cairn-token")`); got != f.srv.Token() {
		t.Errorf("the tab's token is %v", got)
	}
	if mode := p.eval(`document.getElementById("mode").textContent`); mode != "" {
		t.Errorf("the tab says %q", mode)
	}
	if back := p.eval(`history.length`); back != float64(2) { // the other site's page and the web view
		t.Errorf("the tab's history has %v entries", back)
	}
}

// In a real browser: /#token=TOKEN&/agent/ID opened in a tab that already
// shows the page (only the fragment changes, so nothing reloads) gives the
// tab the token, takes it out of the URL and opens the agent.
func TestBrowserTokenInHashOfAnOpenTab(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	p := openPage(t, f.http.URL+"/")
	p.waitFor("watching only", `document.getElementById("mode").textContent.startsWith("watching only")`)
	p.waitFor("the agent list", `document.querySelector('[data-agent="w"]') !== null`)
	p.eval(`location.hash = "#token=` + f.srv.Token() + `&/agent/w"`)
	p.waitFor("the agent's page with its buttons", `[...document.querySelectorAll("button")].some(b => b.textContent === "Snapshot")`)
	if href := p.eval("location.href"); href != f.http.URL+"/#/agent/w" {
		t.Errorf("the tab is on %v", href)
	}
	if got := p.eval(`sessionStorage.getItem("cairn-token")`); got != f.srv.Token() {
		t.Errorf("the tab's token is %v", got)
	}
	if mode := p.eval(`document.getElementById("mode").textContent`); mode != "" {
		t.Errorf("the tab says %q", mode)
	}
}

// In a real browser: of two calls of a round writing one file, the one
// whose change stood is marked ok and the one whose change was refused
// is marked a conflict, in red, never "✓ ok".
func TestBrowserMarksARefusedChange(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("c", doneAgent, `
turns:
  - tool_calls:
      - {name: write_file, input: {path: same.txt, content: first}}
      - {name: write_file, input: {path: same.txt, content: second}}
  - text: done
`)
	page := chromium(t, f.http.URL+"/#token="+f.srv.Token()+"&/agent/c")
	if n := strings.Count(page, "✓ ok"); n != 1 {
		t.Errorf("%d calls marked ok, want 1:\n%s", n, page)
	}
	if n := strings.Count(page, "✗ conflict: changes refused"); n != 1 {
		t.Errorf("%d calls marked a conflict, want 1:\n%s", n, page)
	}
}

// In a real browser: a cut of the context the model is sent shows in the
// timeline, at the round it was made for, saying what it left out.
func TestBrowserShowsAContextCut(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{Loopback: true})
	big := strings.Repeat("a line of the notes that the agent reads again\n", 120)
	must(t, os.MkdirAll(filepath.Join(f.agents, "cut", "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.agents, "cut", "workspace", "big.txt"), []byte(big), 0o644))
	read := "  - tool_calls: [{name: read_file, input: {path: big.txt}}]\n"
	f.run("cut", doneAgent+"context: {budget: 3000, policy: drop, keep_turns: 1}\n",
		"turns:\n"+strings.Repeat(read, 5)+"  - text: done\n")
	page := chromium(t, f.http.URL+"/#token="+f.srv.Token()+"&/agent/cut")
	if !strings.Contains(page, "· context: for round ") || !strings.Contains(page, "were left out") {
		t.Fatalf("the agent page shows no cut of the context:\n%s", page)
	}
}
