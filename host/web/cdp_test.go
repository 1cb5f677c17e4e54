package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// page is one tab of a headless Chromium driven over the DevTools
// protocol on a pipe (--remote-debugging-pipe: the browser reads
// NUL-terminated JSON commands on fd 3 and answers on fd 4), so a test can
// click in the page and read it back, with nothing but the browser.
type page struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      *os.File
	session string

	mu      sync.Mutex
	next    int
	waiting map[int]chan cdpAnswer
}

type cdpAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// openPage starts Chromium and opens url in a new tab.
func openPage(t *testing.T, url string) *page {
	t.Helper()
	needsBrowser(t)
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("-browser: %v", err)
	}
	cmdR, cmdW, err := os.Pipe()
	must(t, err)
	outR, outW, err := os.Pipe()
	must(t, err)
	p := &page{t: t, in: cmdW, waiting: map[int]chan cdpAnswer{}}
	p.cmd = exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+profileDir(t), "--remote-debugging-pipe", "--window-size=390,844", "about:blank")
	p.cmd.ExtraFiles = []*os.File{cmdR, outW}
	must(t, p.cmd.Start())
	cmdR.Close()
	outW.Close()
	t.Cleanup(func() {
		cmdW.Close()
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
	go p.read(outR)
	var target struct{ TargetID string }
	p.call("", "Target.createTarget", map[string]any{"url": url}, &target)
	var attached struct{ SessionID string }
	p.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	p.session = attached.SessionID
	return p
}

// read hands each answer to the call that waits for it; events are
// dropped.
func (p *page) read(out *os.File) {
	r := bufio.NewReader(out)
	for {
		msg, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID int `json:"id"`
			cdpAnswer
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID == 0 {
			continue
		}
		p.mu.Lock()
		ch := p.waiting[m.ID]
		delete(p.waiting, m.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- m.cdpAnswer
		}
	}
}

// call sends one command and decodes its result into v.
func (p *page) call(session, method string, params, v any) {
	p.t.Helper()
	if err := p.tryCall(session, method, params, v); err != nil {
		p.t.Fatal(err)
	}
}

// tryCall is call, returning the browser's error instead of failing.
func (p *page) tryCall(session, method string, params, v any) error {
	p.mu.Lock()
	p.next++
	id, ch := p.next, make(chan cdpAnswer, 1)
	p.waiting[id] = ch
	p.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := json.Marshal(msg)
	if _, err := p.in.Write(append(b, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case a := <-ch:
		if a.Error != nil {
			return fmt.Errorf("%s: %s", method, a.Error.Message)
		}
		if v != nil {
			return json.Unmarshal(a.Result, v)
		}
		return nil
	case <-time.After(time.Minute):
		return fmt.Errorf("%s: no answer from the browser in a minute", method)
	}
}

// eval runs a JavaScript expression in the page and returns its value.
func (p *page) eval(expr string) any {
	p.t.Helper()
	v, err := p.tryEval(expr)
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

// tryEval is eval, returning the browser's error instead of failing.
func (p *page) tryEval(expr string) (any, error) {
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	if err := p.tryCall(p.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		return nil, err
	}
	if r.ExceptionDetails != nil {
		return nil, fmt.Errorf("%s: %v", expr, r.ExceptionDetails)
	}
	return r.Result.Value, nil
}

// navigating says whether err is the browser's answer to an evaluation
// that a navigation of the page cut off: the page is on its way to the
// next one, which is not an answer yet.
func navigating(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "navigated or closed") || strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Cannot find context")
}

// waitFor evaluates expr until it is true; an expression that throws,
// as one does on a page still loading, or one a navigation cuts off, is
// not true yet. The page updates
// itself (every two seconds, or as events arrive), so this waits for the
// page, not for a time; the context bounds it only so a broken page fails
// the test.
func (p *page) waitFor(what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		v, err := p.tryEval("(() => { try { return " + expr + " } catch { return false } })()")
		if err != nil && !navigating(err) {
			p.t.Fatal(err)
		}
		if v == true {
			return
		}
		select {
		case <-ctx.Done():
			p.t.Fatalf("the page never showed %s (%s):\n%v", what, expr, p.eval("document.body && document.body.innerText"))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// click clicks the element a selector finds.
func (p *page) click(selector string) {
	p.t.Helper()
	if p.eval(fmt.Sprintf("(e => e ? (e.click(), true) : false)(document.querySelector(%q))", selector)) != true {
		p.t.Fatalf("nothing to click at %s:\n%v", selector, p.eval("document.body.innerText"))
	}
}
