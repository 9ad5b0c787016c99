package worker_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// TestDescriptors_direct: a manifest Tool is advertised with what makes it a direct
// Action — its description, params, columns and facts — and the worker's vault names
// its Sources, never their values (docs/workers.md, "Direct Actions").
func TestDescriptors_direct(t *testing.T) {
	m, err := worker.ParseManifest([]byte(`{"format":"docket-worker-tools/1","tools":{"acme.orders.list@1":{
		"adapter":"http","sourceTypes":["http"],"entry":"GET /orders","description":"Lists orders.",
		"params":{"status":{"type":"string"},"customer":{"type":"string","required":true,"description":"who"}},
		"returns":["id","total_cents"],
		"facts":[{"predicate":"order_total","args":{"order":"$id","cents":"$total_cents"}}]}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := worker.ParseVault([]byte(`{"sources":{"shop":{"type":"http","url":"https://api.example.com","headers":{"Authorization":"Bearer s3cret"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := worker.NewExecutor(worker.Config{Project: "demo", Connection: testConnection, Key: testKey, Manifest: m, Vault: v,
		Adapters: map[string]worker.Adapter{worker.AdapterWorkspace: nopAdapter{}, worker.AdapterHTTP: nopAdapter{}}, Workspace: worker.WorkspaceReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	var got contract.ToolDescriptor
	for _, d := range e.Descriptors() {
		if d.Tool == "acme.orders.list@1" {
			got = d
		}
		if d.Tool == worker.WorkspaceTool(worker.OpWriteJSON) && d.Direct {
			t.Errorf("write_json, whose arguments are open, is advertised as direct")
		}
	}
	_, digest, _ := m.Lookup("acme.orders.list@1")
	want := contract.ToolDescriptor{Tool: "acme.orders.list@1", Digest: digest, Adapter: "http", AdapterDigest: got.AdapterDigest, Kind: "read",
		SourceTypes: []string{"http"}, Direct: true, Description: "Lists orders.",
		Params:  []contract.ToolParam{{Name: "customer", Type: "string", Required: true, Description: "who"}, {Name: "status", Type: "string"}},
		Returns: []string{"id", "total_cents"},
		Facts:   []contract.ToolFact{{Predicate: "order_total", Args: map[string]string{"order": "$id", "cents": "$total_cents"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("descriptor (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"shop"}, e.VaultNames()); diff != "" {
		t.Errorf("VaultNames (-want +got):\n%s", diff)
	}
}
