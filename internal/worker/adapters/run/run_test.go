package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/run"
	"github.com/google/go-cmp/cmp"
)

var valueEqual = cmp.Comparer(func(a, b contract.Value) bool { return a == b })

// script writes an executable sh script at root/bin/name.
func script(t *testing.T, root, name, body string) {
	t.Helper()
	p := filepath.Join(root, "bin", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func execute(t *testing.T, a *run.Adapter, def worker.Tool, args contract.Args) (worker.Outcome, error) {
	t.Helper()
	def.Adapter = worker.AdapterRun
	if def.Kind == "" {
		def.Kind = contract.ToolKindRun
	}
	return a.Execute(context.Background(), worker.Call{Tool: "acme.test@1", Def: def, Args: args})
}

func num(t testing.TB, i int64) contract.Value {
	t.Helper()
	v, err := contract.IntValue(i)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestAdapter_Execute(t *testing.T) {
	root := t.TempDir()
	script(t, root, "echo_args", `cat; echo`)
	script(t, root, "argv", `for a in "$@"; do printf '{"arg":"%s"}\n' "$a"; done`)
	script(t, root, "lines", `printf '{"n":1}\n\n{"n":2,"x":null}\n'`)
	script(t, root, "array", `echo '[{"n":1},{"n":2}]'`)
	script(t, root, "refuse", `echo "month 2026-11 is closed" >&2; echo "more detail" >&2; exit 2`)
	script(t, root, "crash", `echo "boom: postgres://u:hunter2@h" >&2; exit 3`)
	script(t, root, "garbage", `echo "not json"`)
	script(t, root, "slow", `sleep 30 & wait`)
	script(t, root, "loud", `i=0; while [ $i -lt 5000 ]; do echo '{"line":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}'; i=$((i+1)); done`)
	if err := os.WriteFile(filepath.Join(root, "bin", "noexec"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/sh", filepath.Join(root, "bin", "link")); err != nil {
		t.Fatal(err)
	}
	a := &run.Adapter{Root: root}
	args := contract.Args{"month": contract.StringValue("2026-11"), "n": num(t, 3)}
	tests := []struct {
		name   string
		def    worker.Tool
		want   []contract.Args
		status worker.Status
		code   contract.Code
		reason string
	}{
		{name: "args on stdin", def: worker.Tool{Entry: "bin/echo_args"}, status: worker.StatusOK,
			want: []contract.Args{{"month": contract.StringValue("2026-11"), "n": num(t, 3)}}},
		{name: "args on argv", def: worker.Tool{Entry: "bin/argv"}, status: worker.StatusOK,
			want: []contract.Args{{"arg": contract.StringValue("month=2026-11")}, {"arg": contract.StringValue("n=3")}}},
		{name: "json lines", def: worker.Tool{Entry: "bin/lines"}, status: worker.StatusOK,
			want: []contract.Args{{"n": num(t, 1)}, {"n": num(t, 2)}}},
		{name: "array", def: worker.Tool{Entry: "./bin/array"}, status: worker.StatusOK,
			want: []contract.Args{{"n": num(t, 1)}, {"n": num(t, 2)}}},
		{name: "exit 2 refuses", def: worker.Tool{Entry: "bin/refuse"}, status: worker.StatusRefused, code: contract.CodeRunRefused,
			reason: "month 2026-11 is closed"},
		{name: "crash of a run tool is unknown", def: worker.Tool{Entry: "bin/crash"}, status: worker.StatusUnknown, code: contract.CodeRunFailed},
		{name: "crash of a read tool is refused", def: worker.Tool{Entry: "bin/crash", Kind: contract.ToolKindRead}, status: worker.StatusRefused, code: contract.CodeRunFailed},
		{name: "not json", def: worker.Tool{Entry: "bin/garbage", Kind: contract.ToolKindRead}, status: worker.StatusRefused, code: contract.CodeRunOutput},
		{name: "timeout kills", def: worker.Tool{Entry: "bin/slow", Fence: &worker.Fence{TimeoutMs: 100}}, status: worker.StatusUnknown, code: contract.CodeToolTimeout},
		{name: "output cap", def: worker.Tool{Entry: "bin/loud", Kind: contract.ToolKindRead, Fence: &worker.Fence{MaxBytes: 1000}}, status: worker.StatusRefused, code: contract.CodeOutputTooBig},
		{name: "absolute entry", def: worker.Tool{Entry: "/bin/sh"}, status: worker.StatusRefused, code: contract.CodeRunEntry},
		{name: "climbing entry", def: worker.Tool{Entry: "bin/../../x"}, status: worker.StatusRefused, code: contract.CodeRunEntry},
		{name: "missing entry", def: worker.Tool{Entry: "bin/nope"}, status: worker.StatusRefused, code: contract.CodeRunEntry},
		{name: "not executable", def: worker.Tool{Entry: "bin/noexec"}, status: worker.StatusRefused, code: contract.CodeRunEntry},
		{name: "symlink entry", def: worker.Tool{Entry: "bin/link"}, status: worker.StatusRefused, code: contract.CodeRunEntry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := execute(t, a, tt.def, args)
			if out.Status != tt.status || out.Code != tt.code {
				t.Fatalf("Execute = %+v (%v), want %s %q", out, err, tt.status, tt.code)
			}
			if tt.reason != "" && out.Reason != tt.reason {
				t.Errorf("reason = %q, want %q", out.Reason, tt.reason)
			}
			if strings.Contains(out.Reason, "hunter2") {
				t.Errorf("reason leaks stderr: %q", out.Reason)
			}
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, out.Rows, valueEqual); diff != "" {
					t.Errorf("rows (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// environOf runs a real program that writes its whole environment to a file, and
// returns it by name.
func environOf(t *testing.T, a *run.Adapter, env *worker.Env, src *worker.Source) map[string]string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "environ")
	script(t, a.Root, "env", "env > '"+out+"'; echo '{}'")
	def := worker.Tool{Adapter: worker.AdapterRun, Kind: contract.ToolKindRun, Entry: "bin/env", Env: env}
	res, err := a.Execute(context.Background(), worker.Call{Tool: "acme.test@1", Def: def, Source: src, Args: contract.Args{}, Invocation: "op-7"})
	if err != nil || res.Status != worker.StatusOK {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	return got
}

// TestAdapter_env shows that a run program gets an allow-list of the worker's
// environment: the basics, what env.pass names (case-insensitively) and what the work
// item decides, never a credential a deny-list would miss.
func TestAdapter_env(t *testing.T) {
	leaks := [][2]string{{"OPENAI_API_KEY", "1"}, {"DOCKET_CONNECTION_KEY", "2"}, {"Db_Password", "3"}, {"AWS_SECRET_ACCESS_KEY", "5"},
		{"DATABASE_URL", "6"}, {"DB_PASS", "7"}, {"MY_APIKEY", "8"}, {"GPG_PASSPHRASE", "9"}, {"MONGODB_URI", "10"},
		{"SQLALCHEMY_DATABASE_URI", "11"}, {"HTTPS_PROXY", "http://u:12@proxy:3128"}, {"NPM_CONFIG__AUTHTOKEN", "13"},
		{"CI_JOB_JWT", "14"}, {"AUTHORIZATION", "15"}, {"PRIVATE_KEY_PEM", "16"}}
	for _, kv := range leaks {
		t.Setenv(kv[0], "leak-value-"+kv[1])
	}
	t.Setenv("ORDERS_DSN", "leak-value-4")
	t.Setenv("REPORT_MONTH", "2026-11")
	a := &run.Adapter{Root: t.TempDir()}
	allowed := map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "LANG": true, "LANGUAGE": true, "TZ": true,
		"TMPDIR": true, "TERM": true, "PWD": true, "SHLVL": true, "_": true, "OLDPWD": true} // the last four: sh sets them itself
	for name, env := range map[string]*worker.Env{"no env": nil, "an empty pass": {Pass: []string{}}} {
		got := environOf(t, a, env, nil)
		for k, v := range got {
			if !allowed[k] && !strings.HasPrefix(k, "LC_") && k != worker.EnvInvocation {
				t.Errorf("%s: the program got %s=%s", name, k, v)
			}
		}
		if got[worker.EnvInvocation] != "op-7" || got["PATH"] == "" {
			t.Errorf("%s: DOCKET_INVOCATION_ID = %q, PATH = %q; want op-7 and the worker's PATH", name, got[worker.EnvInvocation], got["PATH"])
		}
		if _, ok := got[worker.EnvSourceType]; ok {
			t.Errorf("%s: a Source-free Tool got %s", name, worker.EnvSourceType)
		}
	}
	got := environOf(t, a, &worker.Env{Pass: []string{"orders_dsn", "Report_Month", "DOCKET_CONNECTION_KEY"}}, nil)
	if got["ORDERS_DSN"] != "leak-value-4" || got["REPORT_MONTH"] != "2026-11" {
		t.Errorf("env.pass, matched case-insensitively, = %q, %q; want both", got["ORDERS_DSN"], got["REPORT_MONTH"])
	}
	if _, ok := got["DOCKET_CONNECTION_KEY"]; ok {
		t.Error("env.pass passed DOCKET_CONNECTION_KEY")
	}
	src := &worker.Source{Name: "calc", Type: "file", Root: t.TempDir()}
	got = environOf(t, a, nil, src)
	if got[worker.EnvSourceType] != "file" || got[worker.EnvSourceAccess] != src.Root {
		t.Errorf("against a file Source: %s=%q %s=%q; want file and its root", worker.EnvSourceType, got[worker.EnvSourceType],
			worker.EnvSourceAccess, got[worker.EnvSourceAccess])
	}
}

// TestAdapter_processGroup shows that a timeout kills the program's children too: the
// child holds stdout open, so the call returns only once the child is gone (or, had the
// group not been killed, after WaitDelay with the child still running).
func TestAdapter_processGroup(t *testing.T) {
	root := t.TempDir()
	script(t, root, "forks", `sleep 300 & echo $! > child.pid; wait`)
	out, _ := execute(t, &run.Adapter{Root: root}, worker.Tool{Entry: "bin/forks", Fence: &worker.Fence{TimeoutMs: 200}}, contract.Args{})
	if out.Code != contract.CodeToolTimeout {
		t.Fatalf("Execute = %+v, want tool_timeout", out)
	}
	pid, err := os.ReadFile(filepath.Join(root, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	// A killed child closes its files before it turns zombie, so the call can return
	// while /proc still shows the child exiting (R or D). Only a child that was never
	// killed is still there after seconds: its sleep lasts 300.
	var state string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(pid)), "stat"))
		if err != nil {
			return // gone and reaped
		}
		// The third field is the state; a killed child not yet reaped is a zombie.
		if f := strings.Fields(string(stat)); len(f) > 2 {
			if state = f[2]; state == "Z" || state == "X" {
				return
			}
		}
	}
	t.Errorf("child %s is still running (state %s) 10 s after the timeout", strings.TrimSpace(string(pid)), state)
}
