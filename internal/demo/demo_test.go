package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	verifiedcalculation "github.com/docketrun/docket/examples/verified-calculation"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/supervisor"
	"github.com/docketrun/docket/internal/workbench"
)

// editing is the demo's supervisor with a test's changes to each child before it starts.
type editing struct {
	*supervisor.Supervisor
	edit func(c *supervisor.Child)
}

func (s editing) Start(c supervisor.Child) error {
	s.edit(&c)
	return s.Supervisor.Start(c)
}

var (
	buildOnce sync.Once
	built     string // the docket binary, once built
	buildErr  error
)

// docketBinary builds the docket command once per test run, for the demo's children
// and for the verbs it runs.
func docketBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "docket-demo-test-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "docket")
		out, err := exec.Command("go", "build", "-o", built, "github.com/docketrun/docket/cmd/docket").CombinedOutput()
		if err != nil {
			buildErr = &buildError{out: out, err: err}
		}
	})
	if buildErr != nil {
		t.Fatalf("build docket: %v", buildErr)
	}
	return built
}

type buildError struct {
	out []byte
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

// execDocket runs the demo's verbs with the built docket binary, the way a person at a
// shell would; vars are the command's only DOCKET_ variables.
func execDocket(t *testing.T) func(ctx context.Context, args []string, vars map[string]string, stdout, stderr io.Writer) error {
	bin := docketBinary(t)
	return func(ctx context.Context, args []string, vars map[string]string, stdout, stderr io.Writer) error {
		var extra []string
		for k, v := range vars {
			extra = append(extra, k+"="+v)
		}
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = workbench.ChildEnviron(nil, extra...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), stdout, stderr
		return cmd.Run()
	}
}

func TestWriteNeedsPerson(t *testing.T) {
	toml, err := fs.ReadFile(verifiedcalculation.Files, "capability/capability.toml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := writeNeedsPerson(toml)
	if err != nil {
		t.Fatalf("writeNeedsPerson(the example) = %v", err)
	}
	checkRaised(t, got)

	tests := []struct {
		name, toml string
	}{
		{"no write_result", "[[action]]\nname          = \"other\"\napproval      = \"none\"\n"},
		{"approval already person", "[[action]]\nname          = \"write_result\"\napproval      = \"person\"\n"},
		{"approval only in a later action", "[[action]]\nname          = \"write_result\"\n[[action]]\nname = \"x\"\napproval      = \"none\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if out, err := writeNeedsPerson([]byte(tt.toml)); err == nil {
				t.Errorf("writeNeedsPerson(%q) = %q, want an error", tt.toml, out)
			}
		})
	}
}

func TestExpandVault(t *testing.T) {
	tests := []struct {
		name, tmpl, ws, want, wantErr string
	}{
		{"workspace", `{"root": "$WORKSPACE"}`, "/tmp/w", `{"root": "/tmp/w"}`, ""},
		{"quoted path", `{"root": "${WORKSPACE}"}`, `/tmp/a "b"\c`, `{"root": "/tmp/a \"b\"\\c"}`, ""},
		{"another variable", `{"root": "$HOME"}`, "/tmp/w", "", "$HOME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := expandVault([]byte(tt.tmpl), tt.ws)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("expandVault(%q) = %q, %v; want an error naming %s", tt.tmpl, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("expandVault(%q, %q) = %q, %v; want %q", tt.tmpl, tt.ws, got, err, tt.want)
			}
		})
	}
	// The example's template, expanded, is a vault the worker reads.
	tmpl, err := fs.ReadFile(verifiedcalculation.Files, "vault.template.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := expandVault(tmpl, "/srv/ws")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Sources map[string]struct {
			Type string `json:"type"`
			Root string `json:"root"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(got, &v); err != nil || v.Sources[demoSource].Root != "/srv/ws" || v.Sources[demoSource].Type != "file" {
		t.Errorf("the example vault expands to %s (%v), want source %s of type file at /srv/ws", got, err, demoSource)
	}
}

// TestDemo_WorkerKilledMidWrite kills the worker after it ran the write and before its
// report reached the authority. The supervisor restarts it; the new instance's lease
// supersedes the old one, and the write's Operation needs a person: it is never run
// again, and the Case does not complete.
func TestDemo_WorkerKilledMidWrite(t *testing.T) {
	var out bytes.Buffer
	d, err := newDemo(Config{Keep: filepath.Join(t.TempDir(), "demo"), Timeout: 2 * time.Minute,
		Exe: docketBinary(t), Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Docket: execDocket(t)})
	if err != nil {
		t.Fatal(err)
	}
	sup := d.sup.(*supervisor.Supervisor)
	// The worker reaches serve through this proxy, which kills it when the write's report
	// (the second report: the first is load_input's) is on its way.
	var (
		target    atomic.Pointer[url.URL]
		mu        sync.Mutex // guards the fields below
		reports   int
		killed    bool
		afterKill []string // the claims and reports sent once the first worker was killed
	)
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target.Load()) },
		ErrorLog: log.New(io.Discard, "", 0)} // the killed worker's long poll ends mid-flight

	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var wb struct {
			Operation struct {
				Kind string `json:"kind"`
			} `json:"operation"`
		}
		json.Unmarshal(body, &wb)
		kind := wb.Operation.Kind
		mu.Lock()
		if killed && (kind == contract.WorkClaim || kind == contract.WorkReport) {
			afterKill = append(afterKill, kind)
		}
		if kind == contract.WorkReport {
			reports++
		}
		kill := kind == contract.WorkReport && reports == 2 && !killed
		killed = killed || kill
		mu.Unlock()
		if kill {
			if err := syscall.Kill(sup.Pid("worker"), syscall.SIGKILL); err != nil {
				t.Errorf("kill the worker: %v", err)
			}
			http.Error(w, "the worker was killed", http.StatusBadGateway)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	// serve gets short leases and holds; the worker reaches serve through the proxy, and
	// is restarted when it exits rather than ending the demo.
	d.sup = editing{Supervisor: sup, edit: func(c *supervisor.Child) {
		switch c.Name {
		case "serve":
			c.Args = append(c.Args, "--lease-ttl", "2s", "--hold", "5s")
		case "worker":
			c.Restart = true
			for i, kv := range c.Env {
				if base, ok := strings.CutPrefix(kv, datadir.URLEnv+"="); ok {
					u, err := url.Parse(base)
					if err != nil {
						t.Errorf("serve's URL %q: %v", base, err)
					}
					target.Store(u)
					c.Env[i] = datadir.URLEnv + "=" + proxy.URL
				}
			}
		}
	}}

	err = d.run(t.Context())
	if cerr := d.close(err == nil); cerr != nil {
		t.Errorf("close: %v", cerr)
	}
	if err == nil || !strings.Contains(err.Error(), "want closed completed") {
		t.Fatalf("demo = %v, want it to stop short of a completed Case\n%s", err, &out)
	}
	text := out.String()
	if !strings.Contains(text, "operation ApplyAction write_result: needs_person") {
		t.Errorf("the write did not end needs_person:\n%s", text)
	}
	if strings.Contains(text, "write_result ran on the worker") {
		t.Errorf("the demo reported the write as run:\n%s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if !killed {
		t.Fatalf("the worker was never killed; the proxy saw %d reports", reports)
	}
	if len(afterKill) != 0 {
		t.Errorf("after the kill the worker sent %v; nothing may be claimed or reported again", afterKill)
	}
	wlog, err := os.ReadFile(sup.LogPath("worker"))
	if err != nil || !strings.Contains(string(wlog), "start 2 of worker") {
		t.Errorf("the worker was not restarted (%v):\n%s", err, wlog)
	}
	t.Logf("demo output:\n%s", text)
}

// TestWriteNeedsPerson_AnyLayout: the approval is raised in the decoded document, so a
// capability.toml laid out differently from the example is raised just the same.
func TestWriteNeedsPerson_AnyLayout(t *testing.T) {
	toml, err := fs.ReadFile(verifiedcalculation.Files, "capability/capability.toml")
	if err != nil {
		t.Fatal(err)
	}
	relaid := strings.NewReplacer(`name          = "write_result"`, `name='write_result'`, `approval      = "none"`, `approval="none"`).Replace(string(toml))
	if relaid == string(toml) {
		t.Fatal("the example has no write_result lines to lay out differently")
	}
	got, err := writeNeedsPerson([]byte(relaid))
	if err != nil {
		t.Fatalf("writeNeedsPerson(a relaid example) = %v", err)
	}
	checkRaised(t, got)
}

// checkRaised checks that raised is the example's capability.toml with write_result, and
// only it, needing a person, and that it loads with the example's rules.
func checkRaised(t *testing.T, raised []byte) {
	t.Helper()
	rules, err := fs.ReadFile(verifiedcalculation.Files, "capability/calculation.dl")
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := capability.LoadFS(fstest.MapFS{"capability.toml": {Data: raised}, "calculation.dl": {Data: rules}})
	if err != nil {
		t.Fatalf("the raised capability does not load: %v", err)
	}
	approvals := map[string]string{}
	for _, a := range pkg.Declarations.Actions {
		approvals[a.Name] = a.Approval
	}
	wantApprovals := map[string]string{"load_input": "none", "write_result": "person", "verify_result": "none"}
	if !maps.Equal(approvals, wantApprovals) {
		t.Errorf("approvals = %v, want %v", approvals, wantApprovals)
	}
}
