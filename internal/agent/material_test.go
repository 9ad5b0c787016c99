package agent_test

import (
	"bytes"
	_ "embed"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/material"
)

//go:embed testdata/material.toml
var materialCapability string

// secret is the material's content: a sentence no other part of the test writes.
const secret = "The launch code of the material test is 7-4-1-9-HYACINTH."

// materialRun runs one conversation in which the model asks to read the material; a
// person decides the read with verdict before the model's second turn, and a worker
// that reads the area settles it when approved. It returns the model server and what
// the runtime logged.
func materialRun(t *testing.T, verdict contract.Verdict, disclose bool) (*providertest.Server, *authorityRig, string) {
	t.Helper()
	area := material.Area{Dir: filepath.Join(t.TempDir(), "materials")}
	meta, err := area.Put("plan.txt", strings.NewReader(secret))
	if err != nil {
		t.Fatal(err)
	}
	r := newAuthorityRigWith(t, time.Minute, map[string]string{"capability.toml": materialCapability})
	// The member records the material's fact (never its bytes) and sets its disclosure.
	if _, err := r.auth.AddMaterial(t.Context(), r.admin, "default", "calc", contract.MaterialAdd{Conversation: "c1",
		Name: meta.Name, Size: meta.Size, MediaType: meta.MediaType, SHA256: meta.SHA256}); err != nil {
		t.Fatalf("AddMaterial: %v", err)
	}
	if _, err := r.auth.SetMaterialDisclosure(t.Context(), r.admin, "default", "calc", meta.SHA256, disclose); err != nil {
		t.Fatalf("SetMaterialDisclosure: %v", err)
	}
	mats := agent.AuthorityMaterials{API: &apiclient.Client{URL: r.api, Token: r.token}, Area: area}
	w := authoritytest.NewWorker(t, r.auth, r.admin, r.ops, authoritytest.WorkerOptions{
		Sources: []contract.Source{{Name: "materials", Type: "file", Words: []string{"material_text"}, Tier: contract.TierAttested}},
		Tools: []contract.ToolDescriptor{{Tool: "docket.material.read@1", Digest: testDigest, Adapter: "material",
			AdapterDigest: "sha256:adad", Kind: "read", SourceTypes: []string{"file"}}}})

	read := `{"tool":"ApplyAction","arguments":{"action":"read_material","params":{"material":"` + meta.SHA256 + `"}}}`
	sc, err := scripted.ParseJSON([]byte(`{"turns":[{"calls":[` + read + `]},{"calls":[{"tool":"QueryBoard"}]},{"calls":[{"tool":"QueryBoard","arguments":{"pattern":{"predicate":"material_text","args":{"material":"?m","text":"?t"}}}}]},{"final":"ok"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := providertest.NewOpenAI(t, sc, "")
	client, err := openai.New(openai.Config{URL: srv.URL + "/v1", Model: "test"})
	if err != nil {
		t.Fatal(err)
	}
	decide := func() {
		reqs, err := r.ops.Operations().Requests(t.Context(), r.admin, "default")
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range reqs {
			if q.State != contract.RequestPending {
				continue
			}
			if _, err := r.ops.Operations().Decide(t.Context(), r.admin, "default", q.ID, contract.Decision{Digest: q.Digest, Verdict: verdict, Reason: "test"}); err != nil {
				t.Fatalf("Decide: %v", err)
			}
		}
		if verdict == contract.VerdictApprove {
			// The worker reads the slice and returns its reference, never its text.
			txt, err := area.ReadText(meta.SHA256, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := contract.IntValue(int64(len(txt.Text)))
			w.Settle(t, r.agent.ID, 1, contract.Args{"material": contract.StringValue(meta.SHA256), "bytes": n,
				"text": contract.StringValue(material.Ref(txt))})
		}
	}
	var logs bytes.Buffer
	l := r.loop(t, &hookProvider{Provider: client, before: map[int]func(){2: decide}}, func(c *agent.LoopConfig) {
		c.Materials = mats
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	wakeAfterWait(t, l)
	if len(srv.Bodies()) < 3 {
		t.Fatalf("the model server got %d requests, want at least 3", len(srv.Bodies()))
	}
	return srv, r, logs.String()
}

// inServe reports whether the text is anywhere in the authority's SQLite files (the
// database, its write-ahead log), which hold its store and events.
func inServe(t *testing.T, r *authorityRig, text string) bool {
	t.Helper()
	files, err := filepath.Glob(r.db + "*")
	if err != nil || len(files) == 0 {
		t.Fatalf("the store's files: %v, %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(text)) {
			return true
		}
	}
	return false
}

// requestsWith returns the indexes of the model requests whose body holds text.
func requestsWith(srv *providertest.Server, text string) []int {
	var out []int
	for i, b := range srv.Bodies() {
		if bytes.Contains(b, []byte(text)) {
			out = append(out, i)
		}
	}
	return out
}

func TestMaterial_ReachesTheModelOnlyApprovedAndDisclosed(t *testing.T) {
	t.Run("approved and disclosed", func(t *testing.T) {
		srv, r, logs := materialRun(t, contract.VerdictApprove, true)
		got := requestsWith(srv, "7-4-1-9-HYACINTH")
		if len(got) == 0 {
			t.Fatalf("no model request carried the material's text; want the requests after the approved read to")
		}
		if got[0] < 2 {
			t.Errorf("model request %d carried the material's text; want none before the read was approved (request 2 on)", got[0])
		}
		if inServe(t, r, "HYACINTH") {
			t.Error("the material's text is in serve's store")
		}
		if strings.Contains(logs, "HYACINTH") {
			t.Error("the material's text is in the runtime's log")
		}
		// The material is a Board fact the Agent sees in its View: its metadata, never
		// its text.
		if got := requestsWith(srv, `\"predicate\":\"material\"`); len(got) == 0 {
			t.Error("no model request showed the material's Board fact in the View")
		}
		ms, err := r.auth.Materials(t.Context(), r.admin, "default", "calc")
		if err != nil || len(ms) != 1 || len(ms[0].Reads) != 1 || ms[0].Reads[0].Ordinal != 1 || !ms[0].Disclosed || ms[0].Basis != contract.MaterialAsserted {
			t.Errorf("Materials = %+v, %v; want the one material, disclosed, read by Operation 1", ms, err)
		} else if rd := ms[0].Reads[0]; rd.ApprovedBy != r.admin.Principal() || rd.Request == "" || rd.ApprovedAt.IsZero() {
			t.Errorf("the read = %+v; want it approved by %s, with its Request and when", rd, r.admin.Principal())
		}
	})
	t.Run("approved, disclosure not allowed", func(t *testing.T) {
		srv, r, logs := materialRun(t, contract.VerdictApprove, false)
		if got := requestsWith(srv, "HYACINTH"); len(got) != 0 {
			t.Errorf("model requests %v carried the material's text without its disclosure", got)
		}
		if got := requestsWith(srv, "disclosure to this Agent's model provider is not allowed"); len(got) == 0 {
			t.Error("no model request said the text is withheld and which permission to ask for")
		}
		if inServe(t, r, "HYACINTH") || strings.Contains(logs, "HYACINTH") {
			t.Error("the material's text is in serve's store or the runtime's log")
		}
	})
	t.Run("disclosed, read denied", func(t *testing.T) {
		srv, r, _ := materialRun(t, contract.VerdictDeny, true)
		if got := requestsWith(srv, "HYACINTH"); len(got) != 0 {
			t.Errorf("model requests %v carried the material's text although its read was denied", got)
		}
		if inServe(t, r, "HYACINTH") {
			t.Error("the material's text is in serve's store")
		}
	})
}
