//go:build unix

package workspace_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/workspace"
)

// A FIFO in the workspace is refused before it is opened, so read_text answers at once
// instead of holding the call (and the Connection) forever.
func TestAdapter_FIFOIsRefusedWithoutBlocking(t *testing.T) {
	src, _ := newSource(t, map[string]string{"ok.txt": "fine"})
	if err := syscall.Mkfifo(filepath.Join(src.Root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pipe", filepath.Join(src.Root, "pipe_link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ op, path string }{
		{worker.OpReadText, "pipe"}, {worker.OpReadJSON, "pipe"}, {worker.OpHash, "pipe"}, {worker.OpReadText, "pipe_link"},
	} {
		done := make(chan worker.Outcome, 1) // receives the one outcome
		go func() {
			out, _ := callWith(t, workspace.Adapter{}, src, tc.op, contract.Args{"path": str(tc.path)})
			done <- out
		}()
		select {
		case out := <-done:
			if out.Status != worker.StatusRefused || out.Code != contract.CodeWorkspaceSpecial {
				t.Errorf("%s %s = %+v, want refused %s", tc.op, tc.path, out, contract.CodeWorkspaceSpecial)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s %s blocked on the FIFO", tc.op, tc.path)
		}
	}
	// search walks past the FIFO and still finds the text.
	out, err := callWith(t, workspace.Adapter{}, src, worker.OpSearch, contract.Args{"pattern": str("fine")})
	if err != nil || out.Status != worker.StatusOK || len(out.Rows) != 1 {
		t.Errorf("search = %+v, %v; want the one match in ok.txt", out, err)
	}
}

// A hard link in the workspace to the worker's vault is refused, as is the vault itself
// when the Source root holds it, and anything in the worker's data dir.
func TestAdapter_HardLinksAndTheWorkersOwnFiles(t *testing.T) {
	src, outside := newSource(t, map[string]string{"plain.txt": "ok"})
	vault := filepath.Join(outside, "vault.json")
	if err := os.WriteFile(vault, []byte(`{"sources":{"x":{"type":"db","dsn":"postgres://u:hunter2@h/db"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(vault, filepath.Join(src.Root, "notes.json")); err != nil {
		t.Fatal(err)
	}
	a := workspace.Adapter{Protected: []string{vault}}
	for _, op := range []string{worker.OpReadText, worker.OpReadJSON, worker.OpHash} {
		wantRefused(t, workspace.Adapter{}, src, op, contract.Args{"path": str("notes.json")}, contract.CodeWorkspaceHardLink)
	}
	out, _ := callWith(t, workspace.Adapter{}, src, worker.OpSearch, contract.Args{"pattern": str("hunter2")})
	if out.Status != worker.StatusOK || len(out.Rows) != 0 {
		t.Errorf("search through a hard link = %+v, want no rows", out)
	}

	// The vault's own directory as a Source: the vault is refused by identity.
	dirSrc := &worker.Source{Name: "etc", Type: "file", Root: outside}
	wantRefused(t, a, dirSrc, worker.OpReadJSON, contract.Args{"path": str("vault.json")}, contract.CodeWorkspaceProtected)
	wantRefused(t, a, dirSrc, worker.OpWriteText, contract.Args{"path": str("vault.json"), "text": str("{}")}, contract.CodeWorkspaceProtected)

	// The data dir inside a Source root: nothing in it is read, listed or written.
	data := filepath.Join(src.Root, "docket-home")
	mustWrite(t, filepath.Join(data, "docket.db"), "db")
	withData := workspace.Adapter{Protected: []string{data}}
	wantRefused(t, withData, src, worker.OpReadText, contract.Args{"path": str("docket-home/docket.db")}, contract.CodeWorkspaceProtected)
	wantRefused(t, withData, src, worker.OpWriteText, contract.Args{"path": str("docket-home/new.txt"), "text": str("x")}, contract.CodeWorkspaceProtected)
	out, _ = callWith(t, withData, src, worker.OpList, contract.Args{})
	for _, r := range out.Rows {
		if p := r["path"].Str(); p == "docket-home" || filepath.Dir(p) == "docket-home" {
			t.Errorf("list shows the data dir: %v", out.Rows)
		}
	}
	// A Source whose root lies inside the data dir (the demo's workspace) works.
	inner := &worker.Source{Name: "ws", Type: "file", Root: filepath.Join(data, "workspace")}
	mustWrite(t, filepath.Join(inner.Root, "in.txt"), "inside")
	out, _ = callWith(t, withData, inner, worker.OpReadText, contract.Args{"path": str("in.txt")})
	if out.Status != worker.StatusOK {
		t.Errorf("read in a workspace inside the data dir = %+v, want ok", out)
	}
}

// Hidden and credential paths are denied by default, allowed by the Source's allow list,
// and a deny pattern always wins.
func TestAdapter_HiddenAndCredentialPaths(t *testing.T) {
	files := map[string]string{".env": "TOKEN=hunter2", ".git/config": "[core]", "certs/server.pem": "k", "keys/id_ed25519": "k",
		".github/workflows/ci.yml": "on: push", "readme.txt": "hello"}
	src, _ := newSource(t, files)
	if err := os.Symlink(".env", filepath.Join(src.Root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".env", ".git/config", "certs/server.pem", "keys/id_ed25519", ".github/workflows/ci.yml", "link"} {
		wantRefused(t, workspace.Adapter{}, src, worker.OpReadText, contract.Args{"path": str(p)}, contract.CodeWorkspaceHidden)
	}
	wantRefused(t, workspace.Adapter{}, src, worker.OpWriteText, contract.Args{"path": str(".git/hooks/pre-commit"), "text": str("x")}, contract.CodeWorkspaceHidden)
	out, _ := callWith(t, workspace.Adapter{}, src, worker.OpList, contract.Args{})
	var listed []string
	for _, r := range out.Rows {
		listed = append(listed, r["path"].Str())
	}
	if want := []string{"certs", "keys", "link", "readme.txt"}; !slices.Equal(listed, want) {
		t.Errorf("list = %v, want %v", listed, want)
	}
	allowed := *src
	allowed.Allow = []string{".github/", "*.pem"}
	allowed.Deny = []string{"certs/*.pem", "readme.txt"}
	out, _ = callWith(t, workspace.Adapter{}, &allowed, worker.OpReadText, contract.Args{"path": str(".github/workflows/ci.yml")})
	if out.Status != worker.StatusOK {
		t.Errorf("read of an allowed hidden path = %+v, want ok", out)
	}
	for _, p := range []string{"certs/server.pem", "readme.txt", ".env"} {
		wantRefused(t, workspace.Adapter{}, &allowed, worker.OpReadText, contract.Args{"path": str(p)}, contract.CodeWorkspaceHidden)
	}
}

// The credential names and the Source's deny patterns match without regard to case, so
// keys/Deploy.KEY is refused as keys/deploy.key is, and a deny of secrets/ holds for
// Secrets/ (the same directory on a case-insensitive file system). An allow pattern
// matches only as written. See docs/workers.md, Fences.
func TestAdapter_CredentialPathsInAnyCase(t *testing.T) {
	tests := []struct {
		path        string
		allow, deny []string
		refused     bool
	}{
		{path: "certs/server.pem", refused: true},
		{path: "certs/SERVER.PEM", refused: true},
		{path: "certs/Server.Pem", refused: true},
		{path: "keys/deploy.key", refused: true},
		{path: "keys/Deploy.KEY", refused: true},
		{path: "keys/store.p12", refused: true},
		{path: "keys/STORE.P12", refused: true},
		{path: "keys/store.pfx", refused: true},
		{path: "keys/Store.PFX", refused: true},
		{path: "keys/id_ed25519", refused: true},
		{path: "keys/ID_ED25519", refused: true},
		{path: "keys/Id_Rsa", refused: true},
		{path: "ID_RSA", refused: true},
		{path: "keys/notes.txt"},
		{path: "Secrets/plan.txt", deny: []string{"secrets/"}, refused: true},
		{path: "SECRETS/plan.txt", deny: []string{"secrets/"}, refused: true},
		{path: "secrets/plan.txt", deny: []string{"Secrets/"}, refused: true},
		{path: "Secrets/Plan.TXT", deny: []string{"secrets/plan.txt"}, refused: true},
		{path: "notes/README.md", deny: []string{"*.MD"}, refused: true},
		{path: "certs/SERVER.PEM", allow: []string{"certs/SERVER.PEM"}},
		{path: "certs/SERVER.PEM", allow: []string{"*.PEM"}},
		{path: "certs/SERVER.PEM", allow: []string{"*.pem"}, refused: true},
		{path: "certs/SERVER.PEM", allow: []string{"*.PEM"}, deny: []string{"certs/server.pem"}, refused: true},
	}
	files := map[string]string{}
	for _, tt := range tests {
		files[tt.path] = "k"
	}
	src, _ := newSource(t, files)
	for _, tt := range tests {
		t.Run(strings.Join(append(append([]string{tt.path}, tt.allow...), tt.deny...), " "), func(t *testing.T) {
			s := *src
			s.Allow, s.Deny = tt.allow, tt.deny
			if tt.refused {
				wantRefused(t, workspace.Adapter{}, &s, worker.OpReadText, contract.Args{"path": str(tt.path)}, contract.CodeWorkspaceHidden)
				wantRefused(t, workspace.Adapter{}, &s, worker.OpWriteText, contract.Args{"path": str(tt.path), "text": str("x")}, contract.CodeWorkspaceHidden)
				return
			}
			if out, err := callWith(t, workspace.Adapter{}, &s, worker.OpReadText, contract.Args{"path": str(tt.path)}); out.Status != worker.StatusOK {
				t.Errorf("read_text %s = %+v (%v), want ok", tt.path, out, err)
			}
		})
	}
}
