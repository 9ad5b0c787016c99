package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-pdf/fpdf"

	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/workbench"
	"github.com/docketrun/docket/internal/worker"
)

// TestMaterials_ReadUnderStart: under a real docket start, with nothing set up by hand,
// a member adds a text file and a PDF with docket material add and allows their
// disclosure; the Agent's runtime, on an OpenAI-compatible test server that keeps every
// request, asks to read the text file, then page 2 of the PDF, with read_material. Each
// read waits for a person; until a member approves it no model request holds its text,
// and once approved docket start's own worker reads the material area and the text
// reaches the model: of the PDF, page 2's and no other page's. A read of a digest no
// member added is refused by the Action's precondition before anyone is asked. docket start set the read up at the
// first add: the area in the vault with a deny-all list for the workspace Tools, the
// capability, the Source binding, and docket.material.read@1 locked needing a person.
// The text is never in serve's store or in any log (docs/materials.md).
func TestMaterials_ReadUnderStart(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	const secret = "START-MATERIAL-KESTREL: the launch code is 7-4-1-9."
	s := newStartEnv(t)
	start, addr, key := s.run(t, "--listen", "127.0.0.1:0")
	var at contract.AgentToken
	s.docketJSON(t, &at, "agent", "create", "calc")
	dir := t.TempDir()
	file, doc := filepath.Join(dir, "plan.txt"), filepath.Join(dir, "spec.pdf")
	writeFile(t, file, secret, 0o644)
	writeFile(t, doc, string(pdfOf(t, "PDF-PAGE-ONE-HERON: the preamble.", "PDF-PAGE-TWO-PLOVER: the launch window.")), 0o644)
	var added []contract.Material
	s.docketJSON(t, &added, "material", "add", "calc", file, doc, "--conversation", "plan-review")
	if len(added) != 2 || added[1].MediaType != "application/pdf" {
		t.Fatalf("docket material add = %+v, want the text file and the PDF", added)
	}
	sha, pdfSHA := added[0].SHA256, added[1].SHA256
	for _, m := range added {
		s.docket(t, nil, "material", "disclose", "calc", m.SHA256, "--allow")
	}

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
	// A digest no member added has no material fact: the read's precondition refuses it
	// before any person is asked.
	unknown := `{"tool":"ApplyAction","arguments":{"action":"read_material","params":{"material":"sha256:` + strings.Repeat("0", 64) + `"}}}`
	readPage := `{"tool":"ApplyAction","arguments":{"action":"read_material","params":{"material":"` + pdfSHA + `","page":2}}}`
	sc, err := scripted.ParseJSON([]byte(`{"turns":[{"calls":[` + unknown + `,` + read + `]},{"calls":[{"tool":"QueryBoard"}]},{"calls":[` + readPage + `]},{"calls":[{"tool":"QueryBoard"}]},` +
		`{"calls":[{"tool":"QueryBoard","arguments":{"pattern":{"predicate":"material_text","args":{"material":"?m","text":"?t"}}}}]},{"final":"read it"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	model := providertest.NewOpenAI(t, sc, "")
	s.docket(t, nil, "agent", "profile", "set", "calc", "--provider", "openai", "--model-url", model.URL+"/v1", "--model", "m")
	s.profiles(t, "calc's runtime running", running("calc"))
	var task contract.Task
	s.docketJSON(t, &task, "task", "post", "--agent", "calc", "--conversation", "plan-review", "Read the plan I added.")
	s.taskIn(t, task.ID, contract.TaskWaiting)
	holds := func(text string) int {
		n := 0
		for _, b := range model.Bodies() {
			if bytes.Contains(b, []byte(text)) {
				n++
			}
		}
		return n
	}
	approve := func(material string) {
		t.Helper()
		var rs []contract.Request
		for deadline := time.Now().Add(60 * time.Second); len(rs) == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			s.docketJSON(t, &rs, "requests")
		}
		if len(rs) != 1 || rs[0].Vector.Action != "read_material" || rs[0].Vector.Args["material"].Str() != material {
			bodies := model.Bodies()
			t.Fatalf("docket requests = %+v, want the read of %s; the model's last request: %s", rs, material, bodies[len(bodies)-1])
		}
		s.docket(t, nil, "decide", string(rs[0].ID), "approve", "--digest", rs[0].Digest)
	}
	for _, secret := range []string{"START-MATERIAL-KESTREL", "PDF-PAGE-TWO-PLOVER"} {
		if n := holds(secret); n != 0 {
			t.Fatalf("%d model requests held %s before its read was approved", n, secret)
		}
	}
	approve(sha) // the only request: the unknown digest's read asked no one
	approve(pdfSHA)
	done := s.finished(t, task.ID)
	if done.State != contract.TaskCompleted {
		t.Fatalf("the task = %+v, want it completed", done)
	}
	for secret, want := range map[string]bool{"START-MATERIAL-KESTREL": true, "PDF-PAGE-TWO-PLOVER": true, "PDF-PAGE-ONE-HERON": false} {
		if got := holds(secret) > 0; got != want {
			t.Errorf("a model request holds %s: %v, want %v (the reads were of the text file and of the PDF's page 2)", secret, got, want)
		}
	}
	if holds(`\"errorCode\":\"action_blocked\",\"teaching\":\"the preconditions of read_material do not hold`) == 0 {
		t.Error("no model request showed the read of an unknown digest refused")
	}
	// Each material is a Board fact the Agent saw in its View, with its name and digest.
	if holds(`\"predicate\":\"material\"`) == 0 || holds(`\"name\":\"spec.pdf\"`) == 0 {
		t.Error("no model request showed the materials' Board facts")
	}
	var listed []contract.Material
	s.docketJSON(t, &listed, "material", "list", "calc")
	if len(listed) != 2 || len(listed[0].Reads) != 1 || len(listed[1].Reads) != 1 {
		t.Fatalf("docket material list = %+v, want one read of each", listed)
	}
	for _, m := range listed {
		if rd := m.Reads[0]; !strings.HasPrefix(string(rd.ApprovedBy), "member:") || rd.Request == "" {
			t.Errorf("the read of %s = %+v; want it approved by the member, with its Request", m.Name, rd)
		}
	}

	// The Agent's page and the conversation's list each material with who added it and
	// each read: which Agent's Operation, when, and who approved it.
	base := "http://" + addr
	b := browsertest.New(t)
	b.Do(chromedp.Navigate(base + "/?key=" + key))
	b.SignIn(base, "admin", "correct horse battery")
	pages := []struct{ path, list, shot string }{
		{"/projects/default/agents/" + string(at.Agent.ID), "#materials", "agent-materials"},
		{"/projects/default/agents/" + string(at.Agent.ID) + "/conversations/plan-review", "#conv-materials", "conversation-materials"},
	}
	for _, pg := range pages {
		b.Do(chromedp.Navigate(base+pg.path), chromedp.WaitVisible(chromedp.CSS(pg.list+" .material-read")))
		got := b.Text(pg.list)
		for _, want := range []string{"plan.txt", "spec.pdf", "added by admin", "read by Agent calc (operation 2)", "read by Agent calc (operation 3)", "approved by admin"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s lists %q, want %q", pg.path, got, want)
			}
		}
		b.Screenshot(materialShots, pg.shot)
	}
	s.stop(t, start)
	for _, secret := range []string{"START-MATERIAL-KESTREL", "PDF-PAGE-TWO-PLOVER", "PDF-PAGE-ONE-HERON"} {
		assertNotStored(t, s.home, secret)
	}
}

// pdfOf makes a PDF of one page per text, here, so no binary fixture is needed.
func pdfOf(t *testing.T, texts ...string) []byte {
	t.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	for _, s := range texts {
		f.AddPage()
		f.SetFont("Helvetica", "", 12)
		f.Cell(40, 10, s)
	}
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// materialShots is where the materials' pages are shot for docs/materials.md.
const materialShots = "../../../docs/materials"

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
