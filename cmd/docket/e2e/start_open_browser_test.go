package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/workbench"
)

// TestStart_GettingIn: a browser without the run key (a bookmark, a browser opened again
// after the cookie was lost) gets a page that says where the URL with the key is, never
// JSON; docket open prints that URL again and hands the browser a private page that goes
// on to it, never the key in a program's arguments; the key's cookie outlives the browser
// session.
func TestStart_GettingIn(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	s := newStartEnv(t)

	// With no docket start running, docket open says so and fails.
	cmd := exec.Command("docket", "open")
	cmd.Env = s.env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "docket start is not running") {
		t.Errorf("docket open without docket start = %v:\n%s", err, out)
	}

	start, addr, key := s.run(t, "--listen", "127.0.0.1:0")
	base := "http://" + addr
	opened := filepath.Join(t.TempDir(), "opened")
	browser := filepath.Join(t.TempDir(), "browser.sh")
	writeFile(t, browser, "#!/bin/sh\necho \"$@\" > "+opened+"\n", 0o755)
	out := s.docket(t, []string{"BROWSER=" + browser}, "open")
	if want := "docket start: open " + base + "/?key=" + key + "\n"; out != want {
		t.Errorf("docket open printed %q, want %q", out, want)
	}
	page := filepath.Join(s.home, workbench.OpenPage)
	var arg []byte
	// The browser is started, not waited for.
	for deadline := time.Now().Add(20 * time.Second); len(arg) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		arg, _ = os.ReadFile(opened)
	}
	if got := strings.TrimSpace(string(arg)); got != "file://"+page {
		t.Errorf("the browser was given %q, want the page %s", got, page)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), `url=`+base+`/?key=`+key) {
		t.Errorf("%s = %s (%v), want a page that goes on to the URL", page, b, err)
	}
	if fi, err := os.Stat(page); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s mode %v (%v), want 0600", page, fi.Mode(), err)
	}

	b := browsertest.New(t)
	b.Do(chromedp.Navigate(base+"/projects/default/needs"), chromedp.WaitVisible(chromedp.CSS("#run-key-needed")))
	if got := b.Text("h1"); got != "Open the URL docket start printed" {
		t.Errorf("a visit without the key shows %q", got)
	}
	if text := b.Text("main"); !strings.Contains(text, "docket open") {
		t.Errorf("the page does not say how to see the URL again:\n%s", text)
	}
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("the run-key page: %q", ps)
	}
	b.Screenshot(workbenchShots, "run-key-needed")
	b.Do(chromedp.Navigate(base+"/?key="+key), chromedp.WaitVisible(chromedp.CSS("form.signin")))
	var found bool
	for _, c := range b.Cookies(base) {
		if c.Name == "docket_run_key" {
			found = true
			if c.Session {
				t.Errorf("the run-key cookie ends with the browser session, want it to outlive it")
			}
		}
	}
	if !found {
		t.Error("the browser holds no run-key cookie")
	}
	s.stop(t, start)
}
