package gateway_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/contract"
)

// Tools of a manifest that state their params, as a worker advertises them: a read whose
// rows map to facts, and a write.
var (
	ordersList = contract.ToolDescriptor{Tool: "acme.orders.list@1", Digest: "sha256:1111111111111111111111111111111111111111111111111111111111111111",
		Adapter: "http", AdapterDigest: "sha256:adad", Kind: "read", SourceTypes: []string{"http"}, Direct: true,
		Description: "Lists a customer's orders with their totals.",
		Params:      []contract.ToolParam{{Name: "customer", Type: "string", Required: true, Description: "the customer id"}},
		Returns:     []string{"id", "total_cents"},
		Facts:       []contract.ToolFact{{Predicate: "order_total", Args: map[string]string{"order": "$id", "cents": "$total_cents", "customer": "$customer"}}}}
	ordersCancel = contract.ToolDescriptor{Tool: "acme.orders.cancel@1", Digest: "sha256:2222222222222222222222222222222222222222222222222222222222222222",
		Adapter: "http", AdapterDigest: "sha256:adad", Kind: "write", SourceTypes: []string{"http"}, Direct: true,
		Params: []contract.ToolParam{{Name: "order", Type: "string", Required: true}}}
)

// ordersWorker plays the worker of the orders Connection, whose Tools are locked as
// `docket tool lock` without a digest locks them.
func (f *fixture) ordersWorker(t *testing.T) *authoritytest.Worker {
	t.Helper()
	return authoritytest.NewWorker(t, f.a, f.admin, f.ops, authoritytest.WorkerOptions{Connection: "orders", LockAdvertised: true,
		Sources:      []contract.Source{{Name: "shop", Type: "http", Words: []string{"order_total"}, Tier: contract.TierAttested}},
		Tools:        []contract.ToolDescriptor{ordersList, ordersCancel},
		VaultSources: []string{"shop"}})
}

// view returns the Agent's View focused on focus (none: no focus), in full.
func view(t *testing.T, cs *mcp.ClientSession, focus ...contract.CaseID) contract.View {
	t.Helper()
	res, _ := call(t, cs, "QueryBoard", contract.QueryBoardInput{Focus: focus, FullView: true})
	return res.View
}

// action returns the View's entry of the Action name, or ok false.
func action(v contract.View, name string) (contract.ActionEntry, bool) {
	i := slices.IndexFunc(v.Actions.Items, func(a contract.ActionEntry) bool { return a.Name == name })
	if i < 0 {
		return contract.ActionEntry{}, false
	}
	return v.Actions.Items[i], true
}

// TestGateway_DirectActions: a locked manifest Tool that states its params is an Action
// with no capability: listed in the View, run in an exploration Case through the worker,
// its rows landing as facts at its Source's tier; unlocked, it leaves the View and its
// pending request is void (tool_unlocked).
func TestGateway_DirectActions(t *testing.T) {
	f := newFixture(t, 20*time.Millisecond)
	w := f.ordersWorker(t)
	cs := f.connect(t, nil)
	ctx := context.Background()

	if e, ok := action(view(t, cs), ordersList.Tool.String()); !ok || e.State != contract.ActionBlocked || e.Reason != contract.BlockCaseType {
		t.Errorf("direct Action outside a Case = %+v (listed %v), want blocked case_type", e, ok)
	}
	open, _ := call(t, cs, "OpenCase", contract.OpenCaseInput{CaseType: "exploration", BusinessKey: contract.Args{"topic": str("orders")}})
	if !open.Accepted {
		t.Fatalf("OpenCase exploration = %+v", open)
	}
	var opened struct {
		Case contract.Case `json:"case"`
	}
	if err := json.Unmarshal(open.Result, &opened); err != nil || opened.Case.CaseID == "" {
		t.Fatalf("OpenCase result %s: %v", open.Result, err)
	}
	caseID := opened.Case.CaseID
	got, ok := action(view(t, cs, caseID), ordersList.Tool.String())
	want := contract.ActionEntry{Name: "acme.orders.list@1", State: contract.ActionReady, Waits: []contract.Wait{contract.WaitExecution},
		Params: []contract.ParamEntry{{Name: "customer", Type: "string", Description: "the customer id"},
			{Name: "source", Type: "string", Optional: true, Description: "the Source to run against, by name; needed only when the Connection binds several http Sources"}},
		Bound: []string{}, CaseID: caseID}
	if diff := cmp.Diff(want, got); diff != "" || !ok {
		t.Errorf("direct read Action in an exploration Case (-want +got):\n%s", diff)
	}

	t.Run("a read runs freely and its rows land at the Source's tier", func(t *testing.T) {
		res, meta := call(t, cs, "ApplyAction", contract.ApplyActionInput{CaseID: caseID, Action: "acme.orders.list@1", Params: contract.Args{"customer": str("c-7")}})
		if !res.Accepted || res.Operations[0].State == contract.OpWaitingForDecision {
			t.Fatalf("ApplyAction of the direct read = %+v, want it running without a decision", res)
		}
		w.Settle(t, f.agent.ID, meta.Ordinal, contract.Args{"id": str("o-1"), "total_cents": intValue(t, 1250)})
		q, _ := call(t, cs, "QueryBoard", contract.QueryBoardInput{Pattern: &contract.Atom{Predicate: "order_total",
			Args: contract.Args{"order": str("?o"), "cents": str("?c"), "customer": str("?k")}}})
		var matches struct {
			Matches contract.Bounded[contract.Node] `json:"matches"`
		}
		if err := json.Unmarshal(q.Result, &matches); err != nil {
			t.Fatalf("decode %s: %v", q.Result, err)
		}
		wantAtom := contract.Atom{Predicate: "order_total", Args: contract.Args{"order": str("o-1"), "cents": intValue(t, 1250), "customer": str("c-7")}}
		if ms := matches.Matches.Items; len(ms) != 1 || ms[0].Tier != contract.TierAttested || ms[0].CreatedBy != "tool:acme.orders.list@1" || jsonOf(t, &wantAtom) != jsonOf(t, ms[0].Atom) {
			t.Errorf("order_total facts = %s, want %v attested by the Tool", q.Result, wantAtom)
		}
		if len(matches.Matches.Items) == 0 {
			return
		}
		why, err := f.a.Why(ctx, f.admin, "default", matches.Matches.Items[0].NodeID)
		if err != nil {
			t.Fatal(err)
		}
		at := why.Root.Attestation
		if at == nil || at.Action != "acme.orders.list@1" || at.Release != "docket.tools@1.0.0" || len(at.Sources) != 1 || at.Sources[0].Name != "shop" {
			t.Errorf("why of the fact: attestation %+v, want the direct Action of the built-in release and the shop Source", at)
		}
	})

	var pending contract.Request
	t.Run("a write waits for a person", func(t *testing.T) {
		res, _ := call(t, cs, "ApplyAction", contract.ApplyActionInput{CaseID: caseID, Action: "acme.orders.cancel@1", Params: contract.Args{"order": str("o-1")}})
		if !res.Accepted || res.Operations[0].State != contract.OpWaitingForDecision {
			t.Fatalf("ApplyAction of the direct write = %+v, want waiting_for_decision", res.Operations)
		}
		reqs := f.pending(t)
		if len(reqs) != 1 || reqs[0].Vector.Action != "acme.orders.cancel@1" || reqs[0].Vector.ToolDigest != ordersCancel.Digest {
			t.Fatalf("pending requests = %+v, want the cancel bound to its locked digest", reqs)
		}
		pending = reqs[0]
	})

	t.Run("unlocked, it leaves the View and its request is void", func(t *testing.T) {
		if _, err := f.a.Directory().UnlockTool(ctx, f.admin, "default", "orders", "acme.orders.cancel@1"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", pending.ID, contract.Decision{Digest: pending.Digest, Verdict: contract.VerdictApprove}); contract.CodeOf(err) != contract.CodeToolUnlocked {
			t.Errorf("approving the request of an unlocked Tool = %v, want tool_unlocked", err)
		}
		rs, err := f.ops.Operations().Requests(ctx, f.admin, "default")
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rs, func(r contract.Request) bool { return r.ID == pending.ID })
		if i < 0 || rs[i].State != contract.RequestVoid {
			t.Errorf("request after unlock = %+v, want void", rs)
		}
		v := view(t, cs, caseID)
		if _, listed := action(v, "acme.orders.cancel@1"); listed {
			t.Errorf("the unlocked Tool's Action is still in the View: %+v", v.Actions.Items)
		}
		if _, listed := action(v, "acme.orders.list@1"); !listed {
			t.Errorf("the Tool still locked left the View: %+v", v.Actions.Items)
		}
		res, _ := call(t, cs, "QueryBoard", struct{}{})
		if j := slices.IndexFunc(res.Operations, func(o contract.OperationEntry) bool { return o.Label == "ApplyAction acme.orders.cancel@1" }); j < 0 ||
			res.Operations[j].State != contract.OpRefused || res.Operations[j].ReasonCode != contract.CodeToolUnlocked {
			t.Errorf("the strip after unlock = %+v, want the cancel refused tool_unlocked", res.Operations)
		}
	})
}

func intValue(t *testing.T, i int64) contract.Value {
	t.Helper()
	v, err := contract.IntValue(i)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
