package worker_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/grant"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/adapters/workspace"
)

// TestExecutor_workspace runs the verified calculation's two tool calls
// through the executor and the real workspace adapter: served rows with real grants,
// decoded from the wire, a read of data/input.json and a write of out/result.json.
func TestExecutor_workspace(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "data", "input.json"),
		[]byte(`{"job_id":"calc-001","unit_price_cents":129900,"quantity":2,"shipping_cents":3000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	vaultJS, _ := json.Marshal(map[string]any{"sources": map[string]any{"calc": map[string]string{"type": "file", "root": root}}})
	vaultPath := filepath.Join(t.TempDir(), "vault.json")
	if err := os.WriteFile(vaultPath, vaultJS, 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := worker.LoadVault(vaultPath)
	if err != nil {
		t.Fatal(err)
	}
	adapters := map[string]worker.Adapter{worker.AdapterWorkspace: workspace.Adapter{}}
	m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{}}`), adapters)
	if err != nil {
		t.Fatal(err)
	}
	e, err := worker.NewExecutor(worker.Config{Project: "demo", Connection: testConnection, Key: testKey, Manifest: m, Vault: v,
		Adapters: adapters, Workspace: worker.WorkspaceReadWrite, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	descs := map[contract.ToolID]contract.ToolDescriptor{}
	for _, d := range e.Descriptors() {
		descs[d.Tool] = d
	}
	// serve plays the authority: it knows only the descriptor the worker advertised.
	serve := func(id, action string, tool contract.ToolID, args string) contract.WorkRow {
		d := descs[tool]
		spec, _ := json.Marshal(contract.WorkToolSpec{Tool: tool, Digest: d.Digest, Kind: d.Kind})
		target := json.RawMessage(`{"source":"calc","sourceType":"file","sourceDigest":"sha256:5ca1ab1e"}`)
		rd, err := grant.RequestDigest(json.RawMessage(args), target, spec)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := grant.Sign(testKey, contract.Grant{Project: "demo", Invocation: "op-" + id, Action: action, Tool: tool,
			ToolDigest: d.Digest, Source: "calc", SourceDigest: "sha256:5ca1ab1e", Connection: "con_0123456789abcdef",
			WorkerID: "wkr-1", Generation: 1, AdapterDigest: d.AdapterDigest, RequestDigest: rd,
			IssuedAt: testNow, ExpiresAt: testNow.Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		wire, _ := json.Marshal(contract.WorkAnswer{Accepted: true, Work: []contract.WorkRow{{ID: id, Project: "demo",
			Invocation: "op-" + id, Action: action, Args: json.RawMessage(args), Target: target, ToolSpec: spec, Grant: tok}}})
		var a contract.WorkAnswer
		if err := contract.DecodeStrict(wire, &a); err != nil {
			t.Fatal(err)
		}
		return a.Work[0]
	}
	run := func(row contract.WorkRow) contract.ReportRequest {
		job, err := e.Prepare(row, "wkr-1", 1)
		if err != nil {
			t.Fatalf("Prepare(%s) = %v", row.ID, err)
		}
		if c := job.Claim(); c.ID != row.ID || c.Grant != row.Grant || c.Generation != 1 {
			t.Fatalf("Claim = %+v, want the row's id and grant at generation 1", c)
		}
		return e.Run(t.Context(), job)
	}

	r := run(serve("w-1", "load_input", worker.WorkspaceTool(worker.OpReadJSON), `{"path":"data/input.json"}`))
	if !r.OK || len(r.Result.Rows) != 1 || r.Result.Rows[0]["unit_price_cents"].Int() != 129900 {
		t.Fatalf("read_json report = %+v", r)
	}
	r = run(serve("w-2", "write_result", worker.WorkspaceTool(worker.OpWriteJSON),
		`{"path":"out/result.json","job_id":"calc-001","subtotal":259800,"total":262800}`))
	if !r.OK {
		t.Fatalf("write_json report = %+v", r)
	}
	b, err := os.ReadFile(filepath.Join(root, "out", "result.json"))
	if want := "{\n  \"job_id\": \"calc-001\",\n  \"subtotal\": 259800,\n  \"total\": 262800\n}\n"; err != nil || string(b) != want {
		t.Errorf("out/result.json = %q, %v; want %q", b, err, want)
	}
}
