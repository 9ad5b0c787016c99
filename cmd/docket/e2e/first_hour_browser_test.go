package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/console/browsertest"
)

// quickstartShots is where TestFirstHour writes the screenshots docs/quickstart.md shows.
const quickstartShots = "../../../docs/quickstart"

// TestFirstHour is docs/quickstart.md as a person meets it, from an empty DOCKET_HOME:
// docket start, then only the browser. The person opens the printed URL, goes on to the
// console, signs in, and lands on Get started; installs the example there with its write
// needing a person; gives a new Agent, calc, the scripted model on docket start's model
// form; gives it the example's task from Get started; and, on Needs you in a second tab,
// approves the write. The Agent's page, left open, shows the Case closed certified
// without a reload. No CLI verb runs after docket start. The Agent's page shows no JSON
// of more than 400 characters outside a closed disclosure, and nothing on it is cut off
// at 1280 px.
func TestFirstHour(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	s := newStartEnv(t)
	start := startProc(t, s.env, "start", "--listen", "127.0.0.1:0")
	start.waitLine(t, "stop with Ctrl-C")
	m := openURL.FindStringSubmatch(start.log())
	if m == nil {
		t.Fatalf("docket start printed no URL:\n%s", start.log())
	}
	printed, base := m[1], "http://"+m[2]

	b := browsertest.New(t)
	// The printed URL opens docket start's model form; the person goes on to the console.
	b.Do(chromedp.Navigate(printed), chromedp.WaitVisible(chromedp.ID("skip")))
	b.Screenshot(quickstartShots, "first-visit")
	b.Do(chromedp.Click(chromedp.ID("skip")))
	b.Landed("/signin")
	b.Do(chromedp.SendKeys(chromedp.CSS("#name"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#passphrase"), "correct horse battery\r"))
	b.Landed("/get-started")
	b.Do(chromedp.WaitVisible(chromedp.ID("install-example")))
	if got := b.Text("h1"); got != "Get started" {
		t.Errorf("an empty project's home is %q, want Get started", got)
	}
	b.Screenshot(quickstartShots, "get-started")

	// 1. The example, its write needing a person, in one click.
	b.Do(chromedp.Click(chromedp.ID("install-example")))
	b.Landed("/get-started")
	b.Do(chromedp.WaitVisible(chromedp.ID("example-installed")))
	if got := b.Text("#example-installed"); !strings.Contains(got, "waits for a person's approval") {
		t.Errorf("the installed example reads %q, want its write waiting for a person", got)
	}

	// 3. An Agent with the scripted model, on docket start's model form.
	b.Do(chromedp.Click(chromedp.ID("choose-model")), chromedp.WaitVisible(chromedp.ID("provider")),
		chromedp.SetValue(chromedp.ID("agent"), "calc"),
		chromedp.SetValue(chromedp.ID("provider"), "scripted"))
	b.Screenshot(quickstartShots, "model-scripted")
	b.Do(chromedp.Submit(chromedp.ID("agent")), chromedp.WaitVisible(chromedp.CSS(`button[id^="give-task-"]`)))
	if got := b.Text("#step-agent"); !strings.Contains(got, "calc") || !strings.Contains(got, "scripted") {
		t.Errorf("Get started's Agent step reads %q, want calc with the scripted model", got)
	}
	b.Screenshot(quickstartShots, "get-started-ready")

	// 4. The example's task, from Get started: the Agent's page follows.
	b.Do(chromedp.Click(chromedp.CSS(`button[id^="give-task-"]`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
	agentPage := browsertest.Run(b, chromedp.Location())
	if !strings.Contains(agentPage, "/agents/agt_") {
		t.Fatalf("after giving the task the browser is at %s, want the Agent's page", agentPage)
	}
	b.Do(chromedp.Evaluate[chromedp.Void]("window.docketMark = 'same page'"),
		chromedp.WaitVisible(chromedp.CSS(`div.task[id$="-waiting-1"]`)))
	if got := b.Text(`div.task[id$="-waiting-1"]`); !strings.Contains(got, "waits on ApplyAction") || !strings.Contains(got, "waiting for decision") ||
		strings.Contains(got, "closed as completed") {
		t.Errorf("the waiting task reads %q, want what it waits on and not the script's last line", got)
	}
	b.Screenshot(quickstartShots, "agent-waiting")

	// Needs you, in a second window (the person's other browser window, signed in the same
	// way): the Agent's page stays open in the first.
	nb := browsertest.New(t)
	nb.Do(chromedp.Navigate(printed), chromedp.WaitVisible(chromedp.CSS("#passphrase")),
		chromedp.SendKeys(chromedp.CSS("#name"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#passphrase"), "correct horse battery\r"),
		chromedp.WaitVisible(chromedp.CSS("nav[aria-label=Console]")),
		chromedp.Navigate(base+"/projects/default/needs"), chromedp.WaitVisible(chromedp.CSS("section.request button.approve")))
	if got := nb.Text("section.request"); !strings.Contains(got, "write_result") || !strings.Contains(got, "sha256:") {
		t.Errorf("Needs you shows %q, want the write's request with its digest", got)
	}
	nb.Screenshot(quickstartShots, "needs-you")
	nb.Do(chromedp.Click(chromedp.CSS("section.request button.approve")), chromedp.WaitVisible(chromedp.CSS(".notice")))

	// The Agent's page, never reloaded, shows the Case closed certified.
	b.Do(chromedp.WaitVisible(chromedp.Search(`//div[@id="agent-cases"]//p[contains(., "closed completed, certified")]`)),
		chromedp.WaitVisible(chromedp.CSS(`div.task[id*="-completed-"]`)))
	if got := browsertestMark(b); got != "same page" {
		t.Errorf("the closed Case appeared after a reload (mark %q), want it live on the open page", got)
	}
	if got := b.Text(`div.task[id*="-completed-"]`); !strings.Contains(got, "closed as completed") {
		t.Errorf("the finished task reads %q, want the script's last line", got)
	}
	b.Screenshot(quickstartShots, "agent-certified")
	for _, p := range pageProblems(b) {
		t.Errorf("the Agent's page: %s", p)
	}
	// A project with something in it opens where the work is, no longer on Get started.
	b.Do(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("nav[aria-label=Console]")))
	if got := b.Text("h1"); got == "Get started" {
		t.Errorf("the project's home is still Get started once it has work in it")
	}
	if ps := b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %q", ps)
	}
	if err := start.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-start.done
	if err := start.cmd.Wait(); err != nil {
		t.Errorf("docket start ended with %v after Ctrl-C", err)
	}
}

// pageProblems returns what makes the open page hard to read at 1280 px: an element
// showing JSON of more than 400 characters outside a closed disclosure (the text a
// closed <details> holds is not rendered, so innerText leaves it out), and an element
// cut off — past the viewport's right edge outside a scrolling container, or holding more
// than it shows, clipped or behind a sideways scroll — or a page wider than the viewport.
func pageProblems(b *browsertest.Browser) []string {
	b.Do(chromedp.EmulateViewport(1280, 900))
	return browsertest.Run(b, chromedp.Evaluate[[]string](`(() => {
  const out = [];
  const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : "");
  const scrolls = el => { for (let p = el.parentElement; p; p = p.parentElement) { const o = getComputedStyle(p).overflowX; if (o === "auto" || o === "scroll") return true; } return false; };
  const W = window.innerWidth;
  if (document.documentElement.scrollWidth > W + 1) out.push("the page is " + document.documentElement.scrollWidth + " px wide at " + W + " px");
  document.querySelectorAll("main *").forEach(el => {
    const text = el.innerText || "";
    if (text.length > 400) {
      const open = text.search(/[\[{]/);
      const close = Math.max(text.lastIndexOf("}"), text.lastIndexOf("]"));
      if (open >= 0 && close - open + 1 > 400) {
        try { JSON.parse(text.slice(open, close + 1)); out.push(name(el) + " shows " + (close - open + 1) + " characters of JSON: " + text.slice(open, open + 60)); } catch (e) {}
      }
    }
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return;
    const s = getComputedStyle(el);
    if (s.overflowX !== "visible" && el.scrollWidth > el.clientWidth + 1) out.push(name(el) + " cuts off its content (" + el.scrollWidth + " px in " + el.clientWidth + " px, overflow " + s.overflowX + ")");
    if (r.right > W + 1 && !scrolls(el)) out.push(name(el) + " is cut off: its right edge is at " + Math.round(r.right) + " px of " + W);
  });
  return out;
})()`))
}
