package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
)

// TestMaterials_AddFilesUnderStart: under a real docket start a member adds one file with
// docket material add and another with the Agent page's Add files in a real browser. Both
// land in the material area in the data dir, both are listed with who added them, and
// neither file's bytes are anywhere in serve's store (the SQLite database and its WAL) or
// in any log of docket start's children (docs/materials.md).
func TestMaterials_AddFilesUnderStart(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	s := newStartEnv(t)
	start, addr, key := s.run(t, "--listen", "127.0.0.1:0")
	var at contract.AgentToken
	s.docketJSON(t, &at, "agent", "create", "calc")

	dir := t.TempDir()
	cliFile, pageFile := filepath.Join(dir, "notes.txt"), filepath.Join(dir, "plan.md")
	writeFile(t, cliFile, "CLI-MATERIAL-PELICAN: the quarterly notes", 0o644)
	writeFile(t, pageFile, "PAGE-MATERIAL-OSPREY: the plan", 0o644)

	var added []contract.Material
	s.docketJSON(t, &added, "material", "add", "calc", cliFile, "--conversation", "c1")
	if len(added) != 1 || added[0].Name != "notes.txt" || added[0].MediaType != "text/plain" || added[0].Basis != contract.MaterialAsserted ||
		added[0].Disclosed || !strings.HasPrefix(string(added[0].AddedBy), "member:") {
		t.Fatalf("docket material add = %+v, want notes.txt, text/plain, asserted by the member, not disclosed", added)
	}

	base := "http://" + addr
	b := browsertest.New(t)
	b.Do(chromedp.Navigate(base + "/?key=" + key))
	b.SignIn(base, "admin", "correct horse battery")
	b.Do(chromedp.Navigate(base+"/projects/default/agents/"+string(at.Agent.ID)), chromedp.WaitVisible(chromedp.ID("materials-form")),
		chromedp.SetUploadFiles(chromedp.ID("materials-files"), []string{pageFile}),
		chromedp.Click(chromedp.ID("add-files")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if got := b.Text(".notice"); !strings.Contains(got, "Files added") {
		t.Errorf("the notice after Add files reads %q, want plan.md added", got)
	}
	got := b.Text("#materials")
	for _, want := range []string{"plan.md", "notes.txt", "text/markdown", "added by", "not read yet", "may not go to the model"} {
		if !strings.Contains(got, want) {
			t.Errorf("the Agent's materials read %q, want %q", got, want)
		}
	}
	var listed []contract.Material
	s.docketJSON(t, &listed, "material", "list", "calc")
	if len(listed) != 2 {
		t.Fatalf("docket material list = %+v, want both files", listed)
	}
	for _, m := range listed {
		hex := strings.TrimPrefix(m.SHA256, "sha256:")
		fi, err := os.Stat(filepath.Join(s.home, "materials", hex))
		if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != m.Size {
			t.Errorf("the material area's copy of %s: %v, %v; want mode 0600 and %d bytes", m.Name, fi, err, m.Size)
		}
	}
	var disclosed contract.Material
	s.docketJSON(t, &disclosed, "material", "disclose", "calc", added[0].SHA256, "--allow")
	if !disclosed.Disclosed || disclosed.DisclosureBy == "" {
		t.Errorf("docket material disclose --allow = %+v, want it disclosed, by the member", disclosed)
	}
	// A file that is not there is refused before anything is sent.
	missing := exec.Command("docket", "material", "add", "calc", filepath.Join(dir, "nope.txt"))
	missing.Env = s.env
	if out, err := missing.CombinedOutput(); err == nil || !strings.Contains(string(out), "material_invalid") {
		t.Errorf("docket material add of a missing file = %v: %s; want material_invalid", err, out)
	}
	s.stop(t, start)

	files, err := filepath.Glob(filepath.Join(s.home, "*.db*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("serve's store files in %s: %v, %v", s.home, files, err)
	}
	logs, err := filepath.Glob(filepath.Join(s.home, "logs", "*"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("the children's logs: %v, %v", logs, err)
	}
	for _, f := range append(files, logs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"CLI-MATERIAL-PELICAN", "PAGE-MATERIAL-OSPREY"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds a material's bytes (%s)", f, secret)
			}
		}
	}
}
