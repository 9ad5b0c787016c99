package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/workbench"
	"github.com/docketrun/docket/internal/worker"
)

// TestMaterials_ReadUnderStart: under a real docket start, with nothing set up by hand,
// a member adds a file with docket material add and allows its disclosure; the Agent's
// runtime, on an OpenAI-compatible test server that keeps every request, asks to read it
// with read_material. The read waits for a person; until a member approves it no model
// request holds the file's text, and once approved docket start's own worker reads the
// material area and the text reaches the model. docket start set the read up at the
// first add: the area in the vault with a deny-all list for the workspace Tools, the
// capability, the Source binding, and docket.material.read@1 locked needing a person.
// The text is never in serve's store or in any log (docs/materials.md).
func TestMaterials_ReadUnderStart(t *testing.T) {
	const secret = "START-MATERIAL-KESTREL: the launch code is 7-4-1-9."
	s := newStartEnv(t)
	start, _, _ := s.run(t, "--listen", "127.0.0.1:0")
	s.docket(t, nil, "agent", "create", "calc")
	file := filepath.Join(t.TempDir(), "plan.txt")
	writeFile(t, file, secret, 0o644)
	var added []contract.Material
	s.docketJSON(t, &added, "material", "add", "calc", file)
	if len(added) != 1 {
		t.Fatalf("docket material add = %+v, want one material", added)
	}
	sha := added[0].SHA256
	s.docket(t, nil, "material", "disclose", "calc", sha, "--allow")

	// What docket start set up at the first add.
	vb, err := os.ReadFile(s.vault)
	if err != nil {
		t.Fatal(err)
	}
	var vault struct {
		Sources map[string]struct {
			Type string   `json:"type"`
			Root string   `json:"root"`
			Deny []string `json:"deny"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(vb, &vault); err != nil {
		t.Fatal(err)
	}
	if src := vault.Sources[workbench.MaterialsSource]; src.Type != "file" || src.Root != filepath.Join(s.home, "materials") || !slices.Equal(src.Deny, []string{"*"}) {
		t.Errorf("the vault's materials Source = %+v, want the material area, denied to the workspace Tools", src)
	}
	if _, ok := vault.Sources["workspace"]; !ok {
		t.Errorf("the vault lost the person's own Source: %s", vb)
	}
	var inv contract.ConnectionTools
	s.docketJSON(t, &inv, "tool", "show", "--connection", workbench.Connection)
	i := slices.IndexFunc(inv.Tools, func(e contract.ToolEntry) bool { return e.Tool == string(worker.MaterialReadTool) })
	if i < 0 || inv.Tools[i].Lock == nil || inv.Tools[i].Lock.Approval != contract.ApprovalPerson || inv.Tools[i].Stale {
		t.Fatalf("the tool inventory = %+v, want %s locked needing a person", inv.Tools, worker.MaterialReadTool)
	}

	read := `{"tool":"ApplyAction","arguments":{"action":"read_material","params":{"material":"` + sha + `"}}}`
	sc, err := scripted.ParseJSON([]byte(`{"turns":[{"calls":[` + read + `]},{"calls":[{"tool":"QueryBoard"}]},` +
		`{"calls":[{"tool":"QueryBoard","arguments":{"pattern":{"predicate":"material_text","args":{"material":"?m","text":"?t"}}}}]},{"final":"read it"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	model := providertest.NewOpenAI(t, sc, "")
	s.docket(t, nil, "agent", "profile", "set", "calc", "--provider", "openai", "--model-url", model.URL+"/v1", "--model", "m")
	s.profiles(t, "calc's runtime running", running("calc"))
	var task contract.Task
	s.docketJSON(t, &task, "task", "post", "--agent", "calc", "Read the plan I added.")
	s.taskIn(t, task.ID, contract.TaskWaiting)
	holds := func() int {
		n := 0
		for _, b := range model.Bodies() {
			if bytes.Contains(b, []byte("START-MATERIAL-KESTREL")) {
				n++
			}
		}
		return n
	}
	if n := holds(); n != 0 {
		t.Fatalf("%d model requests held the material's text before the read was approved", n)
	}
	var rs []contract.Request
	s.docketJSON(t, &rs, "requests")
	if len(rs) != 1 || rs[0].Vector.Action != "read_material" {
		t.Fatalf("docket requests = %+v, want the read's request", rs)
	}
	s.docket(t, nil, "decide", string(rs[0].ID), "approve", "--digest", rs[0].Digest)
	done := s.finished(t, task.ID)
	if done.State != contract.TaskCompleted {
		t.Fatalf("the task = %+v, want it completed", done)
	}
	if holds() == 0 {
		t.Errorf("no model request held the material's text after the read was approved and its disclosure allowed")
	}
	var listed []contract.Material
	s.docketJSON(t, &listed, "material", "list", "calc")
	if len(listed) != 1 || len(listed[0].Reads) != 1 {
		t.Errorf("docket material list = %+v, want the one read", listed)
	}
	s.stop(t, start)
	assertNotStored(t, s.home, "START-MATERIAL-KESTREL")
}

// assertNotStored fails when any of serve's store files or docket start's logs under home
// holds secret.
func assertNotStored(t *testing.T, home, secret string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(home, "*.db*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("serve's store files in %s: %v, %v", home, files, err)
	}
	logs, err := filepath.Glob(filepath.Join(home, "logs", "*"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("the children's logs: %v, %v", logs, err)
	}
	for _, f := range append(files, logs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds a material's text (%s)", f, secret)
		}
	}
}
