package e2e

import (
	"bytes"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/console/browsertest"
)

// badManifest misspells a Tool's "adapter": the worker refuses it at every start.
const badManifest = `{"format": "docket-worker-tools/1", "tools": {"acme.report@1": {"adaptor": "run", "entry": "bin/report"}}}`

// typoAdvice is what the worker's refusal says to do, as start's terminal, the Workers
// page and docket doctor quote it.
const typoAdvice = `unknown field "adaptor" (did you mean "adapter"?)`

// TestStart_WorkerCrashLoop: a typo in tools.json makes the worker docket start runs exit
// at every start. Each exit is printed on start's terminal with its restart count and the
// last lines of the worker's log, which name the file and the fix; the crash loop is
// named there, on the Workers page and by docket doctor, which fails and never tells the
// person to start a worker docket start already runs. No time on the page reads 1970.
func TestStart_WorkerCrashLoop(t *testing.T) {
	s := newStartEnv(t)
	writeFile(t, s.man, badManifest, 0o644)
	start, addr, key := s.run(t, "--listen", "127.0.0.1:0")

	start.waitLine(t, "worker is in a crash loop")
	out := start.log()
	for _, want := range []string{
		"docket start: worker exited (exit status 1); restart 1 in ",
		"the last lines of " + s.home + "/logs/worker.log:",
		"fix " + s.man + ": " + typoAdvice,
		"docket start: worker is in a crash loop: it exited 3 times in a row",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("start's terminal lacks %q:\n%s", want, out)
		}
	}

	// doctor reads what start reported, which arrives after the exit was printed.
	var doc string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		cmd := exec.Command("docket", "doctor")
		cmd.Env = s.env
		var stdout bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stdout
		err := cmd.Run()
		doc = stdout.String()
		if strings.Contains(doc, "crash loop") {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Errorf("docket doctor exited %v on a crash loop, want status 1:\n%s", err, doc)
			}
			break
		}
	}
	if !strings.Contains(doc, "FAIL worker local") || !strings.Contains(doc, "fix "+s.man+": "+typoAdvice) {
		t.Errorf("docket doctor does not fail the worker with the fix:\n%s", doc)
	}
	if strings.Contains(doc, "start docket worker") {
		t.Errorf("docket doctor tells the person to start the worker docket start runs:\n%s", doc)
	}

	base := "http://" + addr
	b := browsertest.New(t)
	b.Do(chromedp.Navigate(base + "/?key=" + key))
	b.SignIn(base, "admin", "correct horse battery")
	b.Do(chromedp.Navigate(base+"/projects/default/workers"), chromedp.WaitVisible(chromedp.CSS("p.refusal[id$=-loop]")))
	loop := b.Text("p.refusal[id$=-loop]")
	if !strings.Contains(loop, "Crash loop") || !strings.Contains(loop, typoAdvice) {
		t.Errorf("the Workers page says %q, want the crash loop with its cause", loop)
	}
	// The epoch as the page writes a time, in UTC: a bare "1969" or "1970" also stands in
	// the test's temporary directory names, which the page shows in the crash loop's log
	// path.
	if page := b.Text("main"); strings.Contains(page, "1970-01-01") {
		t.Errorf("the Workers page shows a time of the epoch:\n%s", page)
	}
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Workers page: %q", ps)
	}
	b.Screenshot(consoleShots, "workers-crash-loop")
	if ps := b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %q", ps)
	}

	// A killed serve is restarted, and said so on start's terminal.
	m := servePid.FindStringSubmatch(start.log())
	if m == nil {
		t.Fatalf("docket start printed no serve pid:\n%s", start.log())
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start.waitLine(t, "docket start: serve exited (signal: killed); restart 1 in ")
	s.stop(t, start)
}

var servePid = regexp.MustCompile(`serve +pid (\d+) at`)
