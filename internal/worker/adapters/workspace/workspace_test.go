package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/workspace"
	"github.com/google/go-cmp/cmp"
)

var valueEqual = cmp.Comparer(func(a, b contract.Value) bool { return a == b })

func str(s string) contract.Value { return contract.StringValue(s) }

func num(t testing.TB, i int64) contract.Value {
	t.Helper()
	v, err := contract.IntValue(i)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// newSource returns a file Source rooted in a fresh directory holding files, and the
// directory beside it that the root must never reach.
func newSource(t *testing.T, files map[string]string) (*worker.Source, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &worker.Source{Name: "calc", Type: "file", Root: root}, outside
}

func call(t *testing.T, src *worker.Source, op string, args contract.Args) (worker.Outcome, error) {
	t.Helper()
	return callWith(t, workspace.Adapter{}, src, op, args)
}

// callWith runs op with args, checked against the built-in Tool's params, through a.
func callWith(t *testing.T, a workspace.Adapter, src *worker.Source, op string, args contract.Args) (worker.Outcome, error) {
	t.Helper()
	m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	id := worker.WorkspaceTool(op)
	def, _, _ := m.Lookup(id)
	if err := def.CheckArgs(id, args); err != nil {
		t.Fatalf("CheckArgs: %v", err)
	}
	return a.Execute(context.Background(), worker.Call{Tool: id, Def: def, Source: src, Args: args})
}

// wantRefused runs op through a and fails the test unless it is refused with code.
func wantRefused(t *testing.T, a workspace.Adapter, src *worker.Source, op string, args contract.Args, code contract.Code) {
	t.Helper()
	if out, err := callWith(t, a, src, op, args); out.Status != worker.StatusRefused || out.Code != code {
		t.Errorf("%s %v = %+v (%v), want refused %s", op, args, out, err, code)
	}
}

func TestAdapter_read(t *testing.T) {
	src, outside := newSource(t, map[string]string{
		"data/input.json": `{"job_id":"calc-001","unit_price_cents":129900,"quantity":2,"shipping_cents":3000,"meta":{"a":[1,2]},"none":null}`,
		"notes.txt":       "first line\nsecond total line\n",
		"blob.bin":        "\x00\x01\x02",
		"latin1.txt":      "caf\xe9",
		"list.json":       `[1,2]`,
	})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(src.Root, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(src.Root, "escape_dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("notes.txt", filepath.Join(src.Root, "inside_link.txt")); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", workspace.DefaultMaxBytes+1)
	if err := os.WriteFile(filepath.Join(src.Root, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		op   string
		args contract.Args
		want []contract.Args
		code contract.Code
	}{
		{name: "read_json returns the object as one row", op: worker.OpReadJSON, args: contract.Args{"path": str("data/input.json")},
			want: []contract.Args{{"job_id": str("calc-001"), "unit_price_cents": num(t, 129900), "quantity": num(t, 2),
				"shipping_cents": num(t, 3000), "meta": str(`{"a":[1,2]}`)}}},
		{name: "read_text", op: worker.OpReadText, args: contract.Args{"path": str("notes.txt")},
			want: []contract.Args{{"path": str("notes.txt"), "text": str("first line\nsecond total line\n")}}},
		{name: "link inside the root is read", op: worker.OpReadText, args: contract.Args{"path": str("inside_link.txt")},
			want: []contract.Args{{"path": str("inside_link.txt"), "text": str("first line\nsecond total line\n")}}},
		{name: "search", op: worker.OpSearch, args: contract.Args{"pattern": str("total")},
			want: []contract.Args{{"path": str("notes.txt"), "line": num(t, 2), "text": str("second total line")}}},
		{name: "hash", op: worker.OpHash, args: contract.Args{"path": str("blob.bin")},
			want: []contract.Args{{"path": str("blob.bin"), "sha256": str("ae4b3280e56e2faf83f414a6e3dabe9d5fbe18976544c05fed121accb85b53fc"), "size": num(t, 3)}}},
		{name: "count", op: worker.OpCount, args: contract.Args{"path": str("data")},
			want: []contract.Args{{"files": num(t, 1), "dirs": num(t, 0)}}},
		{name: "traversal", op: worker.OpReadText, args: contract.Args{"path": str("../outside/secret.txt")}, code: contract.CodeWorkspacePath},
		{name: "hidden traversal", op: worker.OpReadText, args: contract.Args{"path": str("data/../../outside/secret.txt")}, code: contract.CodeWorkspacePath},
		{name: "absolute", op: worker.OpReadText, args: contract.Args{"path": str(filepath.Join(outside, "secret.txt"))}, code: contract.CodeWorkspacePath},
		{name: "backslash", op: worker.OpReadText, args: contract.Args{"path": str(`..\outside\secret.txt`)}, code: contract.CodeWorkspacePath},
		{name: "symlink escape", op: worker.OpReadText, args: contract.Args{"path": str("escape.txt")}, code: contract.CodeWorkspacePath},
		{name: "symlinked dir escape", op: worker.OpReadText, args: contract.Args{"path": str("escape_dir/secret.txt")}, code: contract.CodeWorkspacePath},
		{name: "list through escaping dir", op: worker.OpList, args: contract.Args{"path": str("escape_dir")}, code: contract.CodeWorkspacePath},
		{name: "binary", op: worker.OpReadText, args: contract.Args{"path": str("blob.bin")}, code: contract.CodeWorkspaceBinary},
		{name: "invalid utf-8", op: worker.OpReadText, args: contract.Args{"path": str("latin1.txt")}, code: contract.CodeWorkspaceBinary},
		{name: "oversized", op: worker.OpReadText, args: contract.Args{"path": str("big.txt")}, code: contract.CodeWorkspaceTooLarge},
		{name: "read_json of a list", op: worker.OpReadJSON, args: contract.Args{"path": str("list.json")}, code: contract.CodeWorkspaceJSON},
		{name: "missing", op: worker.OpReadText, args: contract.Args{"path": str("nope.txt")}, code: contract.CodeWorkspaceNotFound},
		{name: "directory", op: worker.OpReadText, args: contract.Args{"path": str("data")}, code: contract.CodeWorkspacePath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := call(t, src, tt.op, tt.args)
			if tt.code != "" {
				if out.Status != worker.StatusRefused || out.Code != tt.code {
					t.Fatalf("Execute = %+v (%v), want refused %s", out, err, tt.code)
				}
				if strings.Contains(out.Reason, "outside secret") {
					t.Errorf("refusal leaks content: %q", out.Reason)
				}
				return
			}
			if err != nil || out.Status != worker.StatusOK {
				t.Fatalf("Execute = %+v, %v", out, err)
			}
			if diff := cmp.Diff(tt.want, out.Rows, valueEqual); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAdapter_list(t *testing.T) {
	src, _ := newSource(t, map[string]string{"a.txt": "a", "d/b.txt": "bb"})
	out, err := call(t, src, worker.OpList, contract.Args{})
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.Args{
		{"path": str("a.txt"), "kind": str("file"), "size": num(t, 1)},
		{"path": str("d"), "kind": str("dir"), "size": out.Rows[1]["size"]},
		{"path": str("d/b.txt"), "kind": str("file"), "size": num(t, 2)},
	}
	if diff := cmp.Diff(want, out.Rows, valueEqual); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
}

func TestAdapter_write(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root, outside string)
		op    string
		args  contract.Args
		file  string // expected content of root/out/result.json
		code  contract.Code
	}{
		{name: "write_json", op: worker.OpWriteJSON,
			args: contract.Args{"path": str("out/result.json"), "job_id": str("calc-001"), "total": num(t, 262800)},
			file: "{\n  \"job_id\": \"calc-001\",\n  \"total\": 262800\n}\n"},
		{name: "write_text replaces", op: worker.OpWriteText, args: contract.Args{"path": str("out/result.json"), "text": str("new")}, file: "new",
			setup: func(t *testing.T, root, _ string) { mustWrite(t, filepath.Join(root, "out/result.json"), "old") }},
		{name: "symlink file", op: worker.OpWriteText, args: contract.Args{"path": str("out/result.json"), "text": str("x")}, code: contract.CodeWorkspaceSymlink,
			setup: func(t *testing.T, root, outside string) {
				mustMkdir(t, filepath.Join(root, "out"))
				mustSymlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "out/result.json"))
			}},
		{name: "symlink to a file inside", op: worker.OpWriteText, args: contract.Args{"path": str("out/result.json"), "text": str("x")}, code: contract.CodeWorkspaceSymlink,
			setup: func(t *testing.T, root, _ string) {
				mustWrite(t, filepath.Join(root, "other.txt"), "keep")
				mustMkdir(t, filepath.Join(root, "out"))
				mustSymlink(t, "../other.txt", filepath.Join(root, "out/result.json"))
			}},
		{name: "symlink dir", op: worker.OpWriteText, args: contract.Args{"path": str("out/result.json"), "text": str("x")}, code: contract.CodeWorkspaceSymlink,
			setup: func(t *testing.T, root, outside string) { mustSymlink(t, outside, filepath.Join(root, "out")) }},
		{name: "traversal", op: worker.OpWriteText, args: contract.Args{"path": str("../outside/x.txt"), "text": str("x")}, code: contract.CodeWorkspacePath},
		{name: "absolute", op: worker.OpWriteText, args: contract.Args{"path": str("/tmp/x.txt"), "text": str("x")}, code: contract.CodeWorkspacePath},
		{name: "root itself", op: worker.OpWriteText, args: contract.Args{"path": str("."), "text": str("x")}, code: contract.CodeWorkspacePath},
		{name: "oversized", op: worker.OpWriteText, args: contract.Args{"path": str("out/result.json"), "text": str(strings.Repeat("x", workspace.DefaultMaxBytes+1))},
			code: contract.CodeWorkspaceTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, outside := newSource(t, nil)
			if tt.setup != nil {
				tt.setup(t, src.Root, outside)
			}
			out, err := call(t, src, tt.op, tt.args)
			if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "outside secret" {
				t.Fatalf("a write reached outside the root: %q", b)
			}
			if tt.code != "" {
				if out.Status != worker.StatusRefused || out.Code != tt.code {
					t.Fatalf("Execute = %+v (%v), want refused %s", out, err, tt.code)
				}
				return
			}
			if err != nil || out.Status != worker.StatusOK {
				t.Fatalf("Execute = %+v, %v", out, err)
			}
			b, err := os.ReadFile(filepath.Join(src.Root, "out/result.json"))
			if err != nil || string(b) != tt.file {
				t.Errorf("file = %q, %v; want %q", b, err, tt.file)
			}
			left, _ := filepath.Glob(filepath.Join(src.Root, "out", ".docket-*"))
			if len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

func TestAdapter_CheckTool(t *testing.T) {
	for _, entry := range []string{"delete", "rm", "shell", "exec", "move", ""} {
		t.Run(entry, func(t *testing.T) {
			err := workspace.Adapter{}.CheckTool("acme.x@1", worker.Tool{Adapter: "workspace", Entry: entry})
			if contract.CodeOf(err) != contract.CodeWorkspaceForbidden {
				t.Errorf("CheckTool(%q) = %v, want workspace_forbidden", entry, err)
			}
		})
	}
}

func mustWrite(t *testing.T, p, body string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestAdapter_symlinkSwap swaps the target directory for a link to outside the root after
// every check of a write has passed, just before its rename: os.Root still refuses to
// follow it out, and nothing outside changes.
func TestAdapter_symlinkSwap(t *testing.T) {
	src, outside := newSource(t, map[string]string{"out/keep.txt": "k"})
	swap := func() {
		if err := os.Rename(filepath.Join(src.Root, "out"), filepath.Join(src.Root, "out.old")); err != nil {
			t.Fatal(err)
		}
		mustSymlink(t, outside, filepath.Join(src.Root, "out"))
	}
	m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	id := worker.WorkspaceTool(worker.OpWriteText)
	def, _, _ := m.Lookup(id)
	out, err := workspace.WithBeforeRename(swap).Execute(context.Background(), worker.Call{Tool: id, Def: def, Source: src,
		Args: contract.Args{"path": str("out/secret.txt"), "text": str("overwritten")}})
	if out.Status != worker.StatusRefused || out.Code != contract.CodeWorkspacePath {
		t.Fatalf("Execute = %+v (%v), want refused workspace_path", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "outside secret" {
		t.Fatalf("the write reached outside the root: %q", b)
	}
}
