package hook_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/hook"
	"github.com/docketrun/docket/internal/hook/claudecode"
)

// repo is a repository with docs/a.md, a link docs/out.md to a file outside it, a link
// docs/in.md to main.go, a dangling link docs/gone.md, and a link dir linked/ to docs/.
func repo(t *testing.T) (root, outside string) {
	t.Helper()
	root, outside = t.TempDir(), t.TempDir()
	for _, f := range []string{filepath.Join(root, "docs", "a.md"), filepath.Join(root, "main.go"), filepath.Join(outside, "secret")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(root, "docs", "out.md"):  filepath.Join(outside, "secret"),
		filepath.Join(root, "docs", "in.md"):   filepath.Join(root, "main.go"),
		filepath.Join(root, "docs", "gone.md"): filepath.Join(outside, "nothing"),
		filepath.Join(root, "linked"):          filepath.Join(root, "docs"),
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func TestResolve(t *testing.T) {
	t.Parallel()
	root, outside := repo(t)
	real, err := filepath.EvalSymlinks(outside)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cwd, path, want string
		fails                 bool
	}{
		{name: "a file inside", path: filepath.Join(root, "docs", "a.md"), want: "docs/a.md"},
		{name: "relative to the working directory", cwd: filepath.Join(root, "docs"), path: "a.md", want: "docs/a.md"},
		{name: "a new file is joined on", path: filepath.Join(root, "docs", "new", "b.md"), want: "docs/new/b.md"},
		{name: "a link to a file inside lands on it", path: filepath.Join(root, "docs", "in.md"), want: "main.go"},
		{name: "a link out of the repository lands outside, absolute", path: filepath.Join(root, "docs", "out.md"), want: filepath.Join(real, "secret")},
		{name: "a linked directory lands on its target", path: filepath.Join(root, "linked", "c.md"), want: "docs/c.md"},
		{name: "dot-dot out of the repository", path: filepath.Join(root, "docs", "..", "..", "x"), want: filepath.Join(filepath.Dir(mustEval(t, root)), "x")},
		{name: "a dangling link is refused", path: filepath.Join(root, "docs", "gone.md"), fails: true},
		{name: "relative without a working directory", path: "a.md", fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := hook.Resolve(root, tt.cwd, tt.path)
			if tt.fails {
				if err == nil {
					t.Fatalf("Resolve = %q, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Resolve = %q, want %q", got, tt.want)
			}
		})
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// authority is the hook's authority in a test: it answers with verdict, or err, and
// runs during before answering.
type authority struct {
	verdict contract.HookVerdict
	err     error
	during  func()
	calls   []contract.HookCall
	outs    []contract.HookOutcome
}

func (a *authority) Hook(_ context.Context, call contract.HookCall) (contract.HookVerdict, error) {
	a.calls = append(a.calls, call)
	if a.during != nil {
		a.during()
	}
	return a.verdict, a.err
}

func (a *authority) HookOutcome(_ context.Context, out contract.HookOutcome) (int64, error) {
	a.outs = append(a.outs, out)
	return 1, a.err
}

func pre(tool, input string) []byte {
	return []byte(`{"session_id":"s","cwd":"/","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"toolu_1"}`)
}

func TestHook_Pre(t *testing.T) {
	t.Parallel()
	root, outside := repo(t)
	a := filepath.Join(root, "docs", "a.md")
	tests := []struct {
		name     string
		in       []byte
		auth     *authority
		allow    bool
		reason   string // a part of the denial's reason
		wantPath string // the path the authority was told
		// withdrawn: the hook told the authority it did not run the call it was allowed
		withdrawn bool
	}{
		{name: "allowed", in: pre("Edit", `{"file_path":"`+a+`"}`), auth: &authority{verdict: contract.HookVerdict{Allow: true}}, allow: true, wantPath: "docs/a.md"},
		{name: "denied with the authority's reason", in: pre("Bash", `{"command":"rm -rf /"}`), auth: &authority{verdict: contract.HookVerdict{Reason: "Docket denied this call"}}, reason: "Docket denied this call"},
		{name: "an unreachable authority denies", in: pre("Bash", `{"command":"ls"}`), auth: &authority{err: errors.New("connection refused")}, reason: "could not record this call"},
		{name: "input that does not decode denies", in: []byte(`{"hook_event_name":"PreToolUse"`), auth: &authority{verdict: contract.HookVerdict{Allow: true}}, reason: "could not read this call"},
		{name: "a link swapped in while the call waited denies", in: pre("Edit", `{"file_path":"`+a+`"}`), wantPath: "docs/a.md",
			auth: &authority{verdict: contract.HookVerdict{Allow: true}, during: func() {
				if err := os.Remove(a); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(outside, "secret"), a); err != nil {
					t.Fatal(err)
				}
			}}, reason: "now lands somewhere else", withdrawn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hook.Hook{Protocol: claudecode.Protocol{}, Authority: tt.auth, Root: root}
			out, err := h.Pre(t.Context(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				HookSpecificOutput struct {
					PermissionDecision       string `json:"permissionDecision"`
					PermissionDecisionReason string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatal(err)
			}
			if got := v.HookSpecificOutput.PermissionDecision == "allow"; got != tt.allow {
				t.Errorf("decision %s, want allow %v", out, tt.allow)
			}
			if !strings.Contains(v.HookSpecificOutput.PermissionDecisionReason, tt.reason) {
				t.Errorf("reason %q does not say %q", v.HookSpecificOutput.PermissionDecisionReason, tt.reason)
			}
			if withdrawn := len(tt.auth.outs) == 1 && tt.auth.outs[0].Withdrawn != "" && tt.auth.outs[0].CallID == "toolu_1"; withdrawn != tt.withdrawn {
				t.Errorf("outcomes %+v, want withdrawn %v", tt.auth.outs, tt.withdrawn)
			}
			if tt.wantPath != "" && (len(tt.auth.calls) != 1 || tt.auth.calls[0].Path != tt.wantPath || tt.auth.calls[0].WaitMillis != hook.DefaultWait.Milliseconds()) {
				t.Errorf("the authority was told %+v, want path %s", tt.auth.calls, tt.wantPath)
			}
		})
	}
}

// TestHook_PreLanding: the hook tells the authority where a file tool lands, resolved
// through every link, and — by the worker's own check on the path as written — when it
// does not land plainly inside the repository (so only a member decides it), or lands on
// a protected path (so the authority refuses it); real hard and symbolic links.
func TestHook_PreLanding(t *testing.T) {
	t.Parallel()
	root, outside := repo(t)
	above := mustEval(t, filepath.Dir(outside))
	// docs/evil is a link to a directory outside; docs/evil/../loot lands beside it.
	if err := os.Symlink(outside, filepath.Join(root, "docs", "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(outside, "secret"), filepath.Join(root, "docs", "hard.md")); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(root, ".claude", "docket", "agent.token")
	for _, f := range []string{token, filepath.Join(root, ".git", "config"), filepath.Join(root, "keys", "Deploy.KEY")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(token, filepath.Join(root, "docs", "tok.txt")); err != nil {
		t.Fatal(err)
	}
	protected := []string{token, filepath.Dir(token), filepath.Join(root, ".git", "config")}
	tests := []struct {
		name, tool, file, cwd string
		path                  string // the resolved path the authority is told
		needsMember           string // a part of why it is not plain; "" when it is
		protected             string // a part of why it is protected; "" when it is not
	}{
		{name: "a plain file", tool: "Edit", file: filepath.Join(root, "docs", "a.md"), path: "docs/a.md"},
		{name: "relative to the working directory", tool: "Edit", file: "a.md", cwd: filepath.Join(root, "docs"), path: "docs/a.md"},
		{name: "a new file", tool: "Write", file: filepath.Join(root, "docs", "new.md"), path: "docs/new.md"},
		{name: "dot-dot through a link out lands outside", tool: "Write", file: filepath.Join(root, "docs") + "/evil/../loot.txt",
			path: filepath.Join(above, "loot.txt"), needsMember: "climbs out"},
		{name: "dot-dot that stays inside", tool: "Edit", file: filepath.Join(root, "docs") + "/../docs/a.md", path: "docs/a.md", needsMember: "climbs out"},
		{name: "a link that stays inside", tool: "Edit", file: filepath.Join(root, "docs", "in.md"), path: "main.go", needsMember: "symbolic link"},
		{name: "a second hard link", tool: "Read", file: filepath.Join(root, "docs", "hard.md"), path: "docs/hard.md", needsMember: "2 hard links"},
		{name: "absolute outside", tool: "Read", file: filepath.Join(outside, "secret"), path: filepath.Join(mustEval(t, outside), "secret"), needsMember: "outside the repository"},
		{name: "a search of a directory outside", tool: "Grep", file: outside, path: mustEval(t, outside), needsMember: "outside the repository"},
		{name: "the hook's token (which docs/tok.txt links to)", tool: "Read", file: token, path: ".claude/docket/agent.token", needsMember: "2 hard links", protected: "protects"},
		{name: "the hook's token under another name", tool: "Read", file: filepath.Join(root, "docs", "tok.txt"), path: "docs/tok.txt",
			needsMember: "2 hard links", protected: "another name"},
		{name: "the hook's config directory", tool: "Write", file: filepath.Join(root, ".claude", "docket", "hook.json"), path: ".claude/docket/hook.json", protected: "protects"},
		{name: "the repository's git config", tool: "Edit", file: filepath.Join(root, ".git", "config"), path: ".git/config", protected: "protects"},
		{name: "a credential in any case", tool: "Read", file: filepath.Join(root, "keys", "Deploy.KEY"), path: "keys/Deploy.KEY", protected: "key or a certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &authority{verdict: contract.HookVerdict{Allow: true}}
			h := hook.Hook{Protocol: claudecode.Protocol{}, Authority: a, Root: root, Protected: protected}
			field := map[string]string{"Grep": "path"}[tt.tool]
			if field == "" {
				field = "file_path"
			}
			in, err := json.Marshal(map[string]any{"session_id": "s", "cwd": tt.cwd, "hook_event_name": "PreToolUse", "tool_name": tt.tool,
				"tool_input": map[string]string{field: tt.file}, "tool_use_id": "toolu_1"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Pre(t.Context(), in); err != nil {
				t.Fatal(err)
			}
			if len(a.calls) != 1 {
				t.Fatalf("the authority was told %d calls, want 1", len(a.calls))
			}
			got := a.calls[0]
			if got.Path != tt.path {
				t.Errorf("path = %q, want %q", got.Path, tt.path)
			}
			if (tt.needsMember == "") != (got.PathNeedsMember == "") || !strings.Contains(got.PathNeedsMember, tt.needsMember) {
				t.Errorf("pathNeedsMember = %q, want %q", got.PathNeedsMember, tt.needsMember)
			}
			if tt.needsMember != "" && !strings.Contains(got.PathNeedsMember, tt.path) {
				t.Errorf("pathNeedsMember = %q does not show where it resolves, %q", got.PathNeedsMember, tt.path)
			}
			if (tt.protected == "") != (got.Protected == "") || !strings.Contains(got.Protected, tt.protected) {
				t.Errorf("protected = %q, want %q", got.Protected, tt.protected)
			}
		})
	}
}

func TestHook_Post(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("y", contract.MaxHookOutput+10)
	tests := []struct {
		name, response string
		truncated      bool
	}{
		{"a small response", `{"stdout":"secret=hunter2"}`, false},
		{"a response past the bound is digested to the bound", `"` + big + `"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &authority{}
			in := `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"env"},"tool_use_id":"toolu_1","tool_response":` + tt.response + `}`
			if err := (hook.Hook{Protocol: claudecode.Protocol{}, Authority: a}).Post(t.Context(), []byte(in)); err != nil {
				t.Fatal(err)
			}
			digested := []byte(tt.response)[:min(len(tt.response), contract.MaxHookOutput)]
			sum := sha256.Sum256(digested)
			want := []contract.HookOutcome{{CallID: "toolu_1", Tool: "Bash", OK: true, OutputDigest: "sha256:" + hex.EncodeToString(sum[:]),
				OutputBytes: int64(len(tt.response)), Truncated: tt.truncated}}
			if diff := cmp.Diff(want, a.outs); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}
