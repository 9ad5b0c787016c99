// Package browsertest drives a real headless Chromium through chromedp for the console's
// tests: it finds the browser (skipping the test with the reason when there is none),
// records every console message, CSP violation and response, and takes the screenshots
// docs/console.md shows.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Names of the environment variables the package reads.
const (
	// EnvBrowser names the browser binary; without it, the first of Candidates on PATH.
	EnvBrowser = "DOCKET_BROWSER"
	// EnvScreenshots, set to 1, makes [Browser.Screenshot] write its PNGs.
	EnvScreenshots = "DOCKET_SCREENSHOTS"
)

// Candidates are the browser binaries tried in order when EnvBrowser is not set.
var Candidates = []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"}

// DefaultTimeout bounds each [Browser.Do] and [Browser.Run].
const DefaultTimeout = 30 * time.Second

// Widths are the viewport widths screenshots are taken at, in CSS pixels: a laptop and a
// phone.
var Widths = []int64{1280, 390}

// Response is one HTTP response the browser received.
type Response struct {
	URL    string
	Status int64
	Type   network.ResourceType
	CSP    string // its Content-Security-Policy header; "" when it had none
}

// Browser is one headless Chromium with one tab, closed when the test ends. Its methods
// fail the test on error. It is safe for concurrent use.
type Browser struct {
	t   testing.TB
	ctx context.Context

	mu        sync.Mutex // guards the fields below
	problems  []string   // console errors and warnings, exceptions, CSP violations
	responses []Response
}

// Flags are the Chromium flags every Browser starts with besides --headless; they keep
// it from reaching the network on its own.
var Flags = []string{"no-sandbox", "disable-gpu", "disable-quic", "no-first-run", "disable-background-networking",
	"disable-component-update", "disable-sync", "disable-extensions", "disable-default-apps", "mute-audio"}

// New starts a browser for t with a fresh profile. extra are further flags, name=value
// or name; for example "host-resolver-rules=MAP evil.test 127.0.0.1". The test is
// skipped when no browser can be found.
func New(t testing.TB, extra ...string) *Browser {
	t.Helper()
	path := Find()
	if path == "" {
		t.Skipf("no browser for the console's browser tests: install chromium (apt-get install -y chromium) or set %s to a Chrome or Chromium binary", EnvBrowser)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.Headless, chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(int(Widths[0]), 900)}
	for _, f := range append(slices.Clone(Flags), extra...) {
		name, value, ok := strings.Cut(f, "=")
		if ok {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(t.Context()), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	b := &Browser{t: t, ctx: ctx}
	if err := chromedp.Listen(ctx, b.record); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return b
}

// Find returns the browser binary the tests use, or "" when there is none.
func Find() string {
	if p := os.Getenv(EnvBrowser); p != "" {
		return p
	}
	for _, name := range Candidates {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// record keeps what the page reports. It runs on the browser's read loop, so it only
// appends.
func (b *Browser) record(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			b.problems = append(b.problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		b.problems = append(b.problems, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber, text))
	case *log.EventEntryAdded:
		e := ev.Entry
		// A refused request is a network entry; the tests read statuses from Responses.
		if e.Source != log.EntrySourceNetwork && (e.Level == log.EntryLevelError || e.Level == log.EntryLevelWarning ||
			e.Source == log.EntrySourceSecurity || e.Source == log.EntrySourceViolation) {
			b.problems = append(b.problems, fmt.Sprintf("log %s/%s at %s: %s", e.Source, e.Level, e.URL, e.Text))
		}
	case *network.EventResponseReceived:
		r := Response{URL: ev.Response.URL, Status: ev.Response.Status, Type: ev.Type}
		for k, v := range ev.Response.Headers {
			if strings.EqualFold(k, "Content-Security-Policy") {
				r.CSP = fmt.Sprint(v)
			}
		}
		b.responses = append(b.responses, r)
	}
}

// Problems returns what the pages reported so far: console errors and warnings, uncaught
// exceptions and security log entries, CSP violations among them.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.problems)
}

// Responses returns the responses the browser received so far, in order.
func (b *Browser) Responses() []Response {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.responses)
}

// Context returns the tab's context, for chromedp calls the methods do not cover.
func (b *Browser) Context() context.Context { return b.ctx }

// Do runs actions in order within DefaultTimeout; an error fails the test.
func (b *Browser) Do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, DefaultTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v\nthe page reported: %q", err, b.Problems())
	}
}

// Run runs one action that returns a value within DefaultTimeout; an error fails the test.
func Run[T any](b *Browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, DefaultTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("browser: %v\nthe page reported: %q", err, b.Problems())
	}
	return v
}

// Text returns the text of the first element the CSS selector css matches, once it is
// visible.
func (b *Browser) Text(css string) string {
	b.t.Helper()
	b.Do(chromedp.WaitVisible(chromedp.CSS(css)))
	return Run(b, chromedp.Text(chromedp.CSS(css)))
}

// Landed waits until the tab has loaded a page whose path ends with path. An action
// that follows a navigation (a link, a form's post and its redirect) would otherwise
// query the document being replaced, and a node the old document gave is gone in the
// new; the asking itself fails while the old document's context is torn down, so it asks
// again until DefaultTimeout.
func (b *Browser) Landed(path string) {
	b.t.Helper()
	check := `location.pathname.endsWith(` + strconv.Quote(path) + `) && document.readyState === "complete"`
	ctx, cancel := context.WithTimeout(b.ctx, DefaultTimeout)
	defer cancel()
	for {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](check)); err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			b.t.Fatalf("the browser did not land on a page at %s: %v", path, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Sent does act, which sends a form (or follows a link), and waits until the page that
// answers has loaded: the page before is marked, and the mark is gone from the new one.
// It is [Browser.Landed] for a form whose answer is a page at the same path.
func (b *Browser) Sent(act chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.Do(chromedp.Evaluate[chromedp.Void]("window.docketBefore = true"), act)
	check := `!window.docketBefore && document.readyState === "complete"`
	ctx, cancel := context.WithTimeout(b.ctx, DefaultTimeout)
	defer cancel()
	for {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](check)); err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			b.t.Fatalf("the page answering the form did not load: %v", context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// SignIn signs in to the console at base (its scheme and host) as a person does, typing
// the name and passphrase and pressing Enter, and waits for the console's navigation.
func (b *Browser) SignIn(base, name, passphrase string) {
	b.t.Helper()
	b.Do(chromedp.Navigate(base+"/signin"),
		chromedp.WaitVisible(chromedp.CSS("#passphrase")),
		chromedp.SendKeys(chromedp.CSS("#name"), name),
		chromedp.SendKeys(chromedp.CSS("#passphrase"), passphrase+"\r"),
		chromedp.WaitVisible(chromedp.CSS("nav[aria-label=Console]")))
}

// A11yProblems returns what makes the current page hard to use with a screen reader: a
// form control without a label, a page without exactly one h1, a heading level skipped,
// a table without a caption or header cells, an image without alt text.
func (b *Browser) A11yProblems() []string {
	b.t.Helper()
	return Run(b, chromedp.Evaluate[[]string](a11yCheck))
}

// a11yCheck runs in the page (through the DevTools protocol, not as page script).
const a11yCheck = `(() => {
  const out = [];
  document.querySelectorAll("input:not([type=hidden]), textarea, select").forEach(el => {
    if (!el.labels || el.labels.length === 0) out.push("unlabelled " + el.tagName.toLowerCase() + " " + (el.name || el.id));
  });
  const h1 = document.querySelectorAll("h1").length;
  if (h1 !== 1) out.push(h1 + " h1 elements, want 1");
  let last = 0;
  document.querySelectorAll("h1, h2, h3, h4, h5, h6").forEach(h => {
    const n = Number(h.tagName[1]);
    if (n > last + 1) out.push("heading " + h.tagName + " after h" + last + ": " + h.textContent.trim());
    last = n;
  });
  document.querySelectorAll("table").forEach(t => {
    if (!t.caption) out.push("table without a caption");
    if (!t.querySelector("th")) out.push("table without header cells");
  });
  document.querySelectorAll("img:not([alt])").forEach(i => out.push("image without alt " + i.src));
  return out;
})()`

// Focus returns, for each of n presses of Tab from the top of the page, the element that
// has the focus: its tag, and its id, its text or its name.
func (b *Browser) Focus(n int) []string {
	b.t.Helper()
	b.Do(chromedp.Evaluate[chromedp.Void]("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)"))
	var out []string
	for range n {
		b.Do(chromedp.KeyEvent("\t"))
		out = append(out, Run(b, chromedp.Evaluate[string](`(() => { const e = document.activeElement;
  return e.tagName.toLowerCase() + " " + (e.id || e.textContent.trim().replace(/\s+/g, " ") || e.name); })()`)))
	}
	return out
}

// DisableScript turns JavaScript off in the tab, for pages that must work without it.
func (b *Browser) DisableScript() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, DefaultTimeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		b.t.Fatalf("browser: turn JavaScript off: %v", err)
	}
}

// Cookies returns the browser's cookies for url, HttpOnly ones included.
func (b *Browser) Cookies(url string) []*network.Cookie {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, DefaultTimeout)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
	if err != nil {
		b.t.Fatalf("browser: read cookies of %s: %v", url, err)
	}
	return res.Cookies
}

// Screenshot writes the page as dir/name-<width>.png at each of Widths, the full height
// of the page, when EnvScreenshots is 1; otherwise it does nothing, so that ordinary
// runs leave the documentation's images alone. The viewport is set back to the first
// width afterwards.
func (b *Browser) Screenshot(dir, name string) {
	b.t.Helper()
	if os.Getenv(EnvScreenshots) != "1" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	for _, w := range Widths {
		b.Do(chromedp.EmulateViewport(w, 800))
		png := Run(b, chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, w)), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	b.Do(chromedp.EmulateViewport(Widths[0], 900))
}
