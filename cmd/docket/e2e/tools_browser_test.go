package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
)

// mcpFilesystemEnv names the pinned @modelcontextprotocol/server-filesystem program
// (node_modules/.bin/mcp-server-filesystem) TestTools_MCPServerFromTheConsole runs;
// .ci/run installs it with npm into a cache dir and sets it.
const mcpFilesystemEnv = "DOCKET_MCP_FILESYSTEM"

// toolsShots is where the tools tests write the screenshots docs/tools.md shows.
const toolsShots = "../../../docs/tools"

// TestTools_MCPServerFromTheConsole is docs/tools.md as a person meets it, from an empty
// data dir: docket start, then only the browser (and an Agent playing a script over
// /mcp). The person adds the official MCP filesystem server as a stdio server on a
// temporary folder, with a token in its environment, on docket start's tools page; its
// tools are discovered through the worker as a governed read; the person adds its read
// Tool (its rows as facts) and its write Tool, and locks both on the Tools page, the
// write needing a person. The Agent calls the read, which runs at once and whose rows
// land as attested facts, and the write, which waits on Needs you with its vector; the
// person approves, it runs once, and the file is on disk. An HTTP API with its key and a
// SQL query with its DSN are added from the templates. The chain of events holds, and
// the token, the key and the DSN typed in are in the vault alone: in no event, log or
// store row (every file of the data dir but the vault is read), nor docket start's output.
func TestTools_MCPServerFromTheConsole(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	server := os.Getenv(mcpFilesystemEnv)
	if server == "" {
		t.Skipf("%s is not set: it names the pinned @modelcontextprotocol/server-filesystem's mcp-server-filesystem, which .ci/run installs with npm", mcpFilesystemEnv)
	}
	const (
		secret = "fs-token-SECRET-5e6f7a8b"
		apiKey = "api-key-SECRET-9c0d1e2f"
		dsn    = "postgres://reader:dsn-SECRET-3a4b@127.0.0.1/shop"
	)
	folder := t.TempDir()
	writeFile(t, filepath.Join(folder, "hello.txt"), "hello from the folder\n", 0o644)

	s := newStartEnv(t)
	start := startProc(t, s.env, "start", "--listen", "127.0.0.1:0")
	start.waitLine(t, "stop with Ctrl-C")
	m := openURL.FindStringSubmatch(start.log())
	if m == nil {
		t.Fatalf("docket start printed no URL:\n%s", start.log())
	}
	printed, base := m[1], "http://"+m[2]

	b := browsertest.New(t)
	b.Do(chromedp.Navigate(printed), chromedp.WaitVisible(chromedp.ID("skip")), chromedp.Click(chromedp.ID("skip")))
	b.Landed("/signin")
	b.Do(chromedp.SendKeys(chromedp.CSS("#name"), "admin"), chromedp.SendKeys(chromedp.CSS("#passphrase"), "correct horse battery\r"))
	b.Landed("/get-started")

	// The Tools page leads to docket start's own page, where the server is added.
	b.Do(chromedp.Navigate(base+"/projects/default/tools"), chromedp.WaitVisible(chromedp.ID("add-tools-link")))
	b.Do(chromedp.Click(chromedp.ID("add-tools-link")))
	b.Landed("/start/tools")
	b.Do(chromedp.WaitVisible(chromedp.ID("mcp-form")),
		chromedp.SendKeys(chromedp.ID("mcp-name"), "files"),
		chromedp.Click(chromedp.ID("mcp-stdio")),
		chromedp.SendKeys(chromedp.ID("mcp-command"), server),
		chromedp.SetValue(chromedp.ID("mcp-args"), folder),
		chromedp.SetValue(chromedp.ID("mcp-env"), "FS_TOKEN="+secret))
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("docket start's tools page: %q", ps)
	}
	b.Screenshot(toolsShots, "add-mcp-server")
	b.Sent(chromedp.Click(chromedp.ID("mcp-add")))
	b.Do(chromedp.WaitVisible(chromedp.CSS("#pick-form, #mcp-error, #tools-error")))
	if got := browsertest.Run(b, chromedp.Evaluate[string](`(document.querySelector(".refusal") || {}).innerText || ""`)); got != "" {
		t.Fatalf("adding the server is refused: %s", got)
	}
	for _, tool := range []string{"read_text_file", "write_file", "list_directory"} {
		if got := b.Text("#found-" + tool); !strings.Contains(got, tool) {
			t.Errorf("the discovered %s reads %q", tool, got)
		}
	}
	if got := b.Text("#found-write_file"); !strings.Contains(got, "content") || !strings.Contains(got, "path") {
		t.Errorf("write_file's row reads %q, want its params from the input schema", got)
	}
	b.Do(chromedp.Click(chromedp.ID("pick-read_text_file")), chromedp.SetValue(chromedp.ID("kind-read_text_file"), "read"),
		chromedp.Click(chromedp.ID("pick-write_file")), chromedp.Clear(chromedp.ID("facts-write_file")))
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("the discovered tools: %q", ps)
	}
	b.Screenshot(toolsShots, "discovered")
	b.Sent(chromedp.Click(chromedp.ID("add-picked")))
	b.Landed("/projects/default/tools")

	// The worker reloads its manifest and advertises the two Tools; the page shows them
	// once it has polled.
	conn := waitAdvertised(t, b, base, "files-read_text_file-1", "files-write_file-1")
	b.Sent(chromedp.Click(chromedp.ID("lock-" + conn + "-files-read_text_file-1")))
	b.Sent(chromedp.Click(chromedp.ID("lock-" + conn + "-files-write_file-1")))
	if got := b.Text("#tool-" + conn + "-files-write_file-1"); !strings.Contains(got, "locked") || !strings.Contains(got, "direct Action") {
		t.Errorf("the write's row reads %q, want it locked and offered as a direct Action", got)
	}
	if v := browsertest.Run(b, chromedp.Value(chromedp.ID("approval-"+conn+"-files-write_file-1"))); v != "person" {
		t.Errorf("the write was locked needing %q, want a person", v)
	}
	b.Screenshot(toolsShots, "tools-locked")

	// An Agent, made on the Agents page; its token shown once.
	b.Do(chromedp.Navigate(base+"/projects/default/agents"), chromedp.WaitVisible(chromedp.ID("agent-name")),
		chromedp.SendKeys(chromedp.ID("agent-name"), "scout"))
	b.Sent(chromedp.Click(chromedp.ID("create-agent")))
	token := browsertest.Run(b, chromedp.Value(chromedp.ID("agent-token")))
	serveURL, err := datadir.ServerURL(func(string) string { return "" }, s.home)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: serveURL + "/mcp", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	play := func(tool string, in any) contract.ToolResult {
		t.Helper()
		args, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		res, err := agent.Call(t.Context(), tool, args)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var tr contract.ToolResult
		if err := json.Unmarshal([]byte(res.Text), &tr); err != nil || !tr.Accepted {
			t.Fatalf("%s = %s (%v), want it accepted", tool, res.Text, err)
		}
		return tr
	}
	open := play(contract.ToolOpenCase, contract.OpenCaseInput{CaseType: "exploration", BusinessKey: contract.Args{"topic": contract.StringValue("the folder")}})
	var opened struct {
		Case contract.Case `json:"case"`
	}
	if err := json.Unmarshal(open.Result, &opened); err != nil {
		t.Fatal(err)
	}
	read := play(contract.ToolApplyAction, contract.ApplyActionInput{CaseID: opened.Case.CaseID, Action: "files.read_text_file@1",
		Params: contract.Args{"path": contract.StringValue(filepath.Join(folder, "hello.txt"))}})
	if st := read.Operations[0].State; st == contract.OpWaitingForDecision {
		t.Fatalf("the read waits for a decision: %+v", read.Operations[0])
	}
	fact := waitFact(t, b, base, "files_read_text_file")
	if !strings.Contains(fact, "hello from the folder") || !strings.Contains(fact, "attested") {
		t.Errorf("the read's fact reads %q, want the file's text, attested", fact)
	}
	b.Screenshot(toolsShots, "read-fact")

	out := filepath.Join(folder, "out.txt")
	write := play(contract.ToolApplyAction, contract.ApplyActionInput{CaseID: opened.Case.CaseID, Action: "files.write_file@1",
		Params: contract.Args{"path": contract.StringValue(out), "content": contract.StringValue("written once, approved")}})
	if st := write.Operations[0].State; st != contract.OpWaitingForDecision {
		t.Fatalf("the write is %s, want it waiting for a person", st)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the file is on disk before the approval: %v", err)
	}
	b.Do(chromedp.Navigate(base+"/projects/default/needs"), chromedp.WaitVisible(chromedp.CSS("section.request button.approve")))
	if got := b.Text("section.request"); !strings.Contains(got, "files.write_file@1") || !strings.Contains(got, "written once, approved") || !strings.Contains(got, "sha256:") {
		t.Errorf("Needs you shows %q, want the write's vector with its content and digest", got)
	}
	b.Screenshot(toolsShots, "needs-you-write")
	b.Sent(chromedp.Click(chromedp.CSS("section.request button.approve")))
	waitFile(t, out, "written once, approved")

	// The templates take an HTTP API's key and a DSN the same way.
	b.Do(chromedp.Navigate(base+"/start/tools"), chromedp.WaitVisible(chromedp.ID("http-form")),
		chromedp.SendKeys(chromedp.ID("http-source"), "shop"),
		chromedp.SendKeys(chromedp.ID("http-base"), "https://api.example.com/v1"),
		chromedp.SendKeys(chromedp.ID("http-auth-header"), "Authorization"),
		chromedp.SendKeys(chromedp.ID("http-auth-value"), "Bearer "+apiKey),
		chromedp.SetValue(chromedp.ID("http-routes"), "acme.order@1 GET /orders/{id} id"))
	b.Screenshot(toolsShots, "templates")
	b.Sent(chromedp.Click(chromedp.ID("http-add")))
	if got := browsertest.Run(b, chromedp.Evaluate[string](`(document.querySelector(".refusal") || {}).innerText || ""`)); got != "" {
		t.Fatalf("adding the HTTP API is refused: %s", got)
	}
	b.Landed("/projects/default/tools")
	// Its routes map no rows to facts: the Source is bound attesting nothing, so its
	// Tools can be locked and run.
	if got := b.Text(".notice"); !strings.Contains(got, "lock each below") {
		t.Errorf("after the HTTP API the notice reads %q, want the Tools to lock", got)
	}
	if n := browsertest.Run(b, chromedp.Evaluate[int](`document.querySelectorAll("tr[id^='source-'][id$='-shop']").length`)); n != 1 {
		t.Errorf("the Source shop is not listed bound on the Tools page")
	}
	b.Do(chromedp.Navigate(base+"/start/tools"), chromedp.WaitVisible(chromedp.ID("sql-form")),
		chromedp.SendKeys(chromedp.ID("sql-source"), "orders"),
		chromedp.SendKeys(chromedp.ID("sql-dsn"), dsn),
		chromedp.SendKeys(chromedp.ID("sql-id"), "acme.totals@1"),
		chromedp.SetValue(chromedp.ID("sql-query"), "SELECT id, total FROM orders WHERE customer = {customer}"))
	b.Sent(chromedp.Click(chromedp.ID("sql-add")))
	if got := browsertest.Run(b, chromedp.Evaluate[string](`(document.querySelector(".refusal") || {}).innerText || ""`)); got != "" {
		t.Fatalf("adding the SQL query is refused: %s", got)
	}
	b.Landed("/projects/default/tools")
	waitAdvertised(t, b, base, "acme-order-1", "acme-totals-1")

	b.Do(chromedp.Navigate(base+"/projects/default/events"), chromedp.WaitVisible(chromedp.ID("check")))
	b.Sent(chromedp.Click(chromedp.ID("check")))
	if got := b.Text("#chain"); !strings.Contains(got, "The chain holds") {
		t.Errorf("the chain check reads %q", got)
	}
	if ps := b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %q", ps)
	}
	// Stopped as a person stops it, with Ctrl-C: no CLI verb after docket start.
	if err := start.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-start.done
	if err := start.cmd.Wait(); err != nil {
		t.Errorf("docket start ended with %v after Ctrl-C", err)
	}
	for _, sec := range []string{secret, apiKey, dsn} {
		assertOnlyInVault(t, sec, s.home, start.log())
	}
}

// waitAdvertised reloads the Tools page until the Connection local's worker advertises
// each Tool (by its element id's slug), and returns the Connection's id.
func waitAdvertised(t *testing.T, b *browsertest.Browser, base string, slugs ...string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b.Do(chromedp.Navigate(base+"/projects/default/tools"), chromedp.WaitVisible(chromedp.CSS("table.inventory")))
		conn := browsertest.Run(b, chromedp.Evaluate[string](`(document.querySelector("section.connection-tools") || {id: ""}).id.replace(/^tools-/, "")`))
		all := true
		for _, s := range slugs {
			if !browsertest.Run(b, chromedp.Evaluate[bool](`!!document.getElementById("lock-`+conn+`-`+s+`")`)) {
				all = false
			}
		}
		if all {
			return conn
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not advertise %v within 30s; the Tools page reads:\n%s", slugs, b.Text("main"))
		}
		time.Sleep(250 * time.Millisecond) // a real worker's next poll; nothing to wait on but the page
	}
}

// waitFact searches the Board page for predicate until a fact of it is shown, and returns
// its row's text.
func waitFact(t *testing.T, b *browsertest.Browser, base, predicate string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b.Do(chromedp.Navigate(base+"/projects/default/board?predicate="+predicate), chromedp.WaitVisible(chromedp.CSS("main h1")))
		if got := browsertest.Run(b, chromedp.Evaluate[string](`(document.querySelector('main table.board tbody tr[id^="fact-"]') || {}).innerText || ""`)); got != "" {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s fact within 30s; the Board page reads:\n%s", predicate, b.Text("main"))
		}
		time.Sleep(250 * time.Millisecond) // a real worker runs the read
	}
}

// waitFile waits until path holds want.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && string(b) == want {
			return
		}
		if time.Now().After(deadline) {
			b, err := os.ReadFile(path)
			t.Fatalf("%s holds %q (%v) after 30s, want %q", path, b, err, want)
		}
		time.Sleep(100 * time.Millisecond) // a real worker runs the write
	}
}

// assertOnlyInVault fails t when secret is in docket start's output, or in any file of
// the data dir dir but the vault: the store, its logs, the manifest.
func assertOnlyInVault(t *testing.T, secret, dir, output string) {
	t.Helper()
	if strings.Contains(output, secret) {
		t.Errorf("the secret typed into the console is in docket start's output")
	}
	inVault := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(secret)) {
			if filepath.Base(path) == "vault.json" {
				inVault = true
			} else {
				t.Errorf("the secret typed into the console is in %s", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !inVault {
		t.Errorf("the secret typed into the console is not in the vault")
	}
}
