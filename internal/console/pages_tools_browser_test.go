package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
)

// The Tools a worker advertises on the Connection lab in TestPages_Tools: a read that
// states its params and the facts its rows are, and a write.
var (
	pageLookup = contract.ToolDescriptor{Tool: "acme.lookup@1", Digest: "sha256:" + strings.Repeat("1a", 32), Adapter: "http",
		AdapterDigest: "sha256:" + strings.Repeat("0b", 32), Kind: contract.ToolKindRead, SourceTypes: []string{"http"}, Direct: true,
		Description: "Look an order up.", Params: []contract.ToolParam{{Name: "order", Type: "string", Required: true}}, Returns: []string{"order", "total"},
		Facts: []contract.ToolFact{{Predicate: "order_total", Args: map[string]string{"order": "$order", "total": "$total"}}}}
	pagePost = contract.ToolDescriptor{Tool: "acme.refund@1", Digest: "sha256:" + strings.Repeat("2c", 32), Adapter: "http",
		AdapterDigest: "sha256:" + strings.Repeat("0b", 32), Kind: contract.ToolKindWrite, SourceTypes: []string{"http"}, Direct: true,
		Params: []contract.ToolParam{{Name: "order", Type: "string", Required: true}}}
)

// TestPages_Tools: the Tools page lists what the Connection's worker advertises with its
// kind, params, returns and lock; Lock shows the digest it locks and locks it with the
// approval chosen (a write needs a person by default), the approval is changed and the
// lock taken back from the page; and a Source is bound with the facts it may attest
// ticked from what the Tools return, not typed.
func TestPages_Tools(t *testing.T) {
	r := newPagesRig(t)
	admin := mustCaller(t, r.testServer)
	authoritytest.NewWorker(t, r.a, admin, r.ops, authoritytest.WorkerOptions{Connection: "lab", Tools: []contract.ToolDescriptor{pageLookup, pagePost}})
	if _, err := r.a.Directory().UnlockTool(t.Context(), admin, "default", "lab", string(pagePost.Tool)); err != nil {
		t.Fatal(err)
	}
	r.signIn(t)
	page := r.URL + "/projects/default/tools"
	r.b.Do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("table.inventory")))
	row := func(tool string) string {
		return r.b.Text(`tr[id$="-` + strings.NewReplacer(".", "-", "@", "-").Replace(tool) + `"]`)
	}
	if got := row("acme.lookup@1"); !strings.Contains(got, "read") || !strings.Contains(got, "order string") || !strings.Contains(got, "order_total") ||
		!strings.Contains(got, "locked") || !strings.Contains(got, pageLookup.Digest) {
		t.Errorf("the lookup's row reads %q, want its kind, params, facts and lock", got)
	}
	if got := row("acme.refund@1"); !strings.Contains(got, "Lock at "+pagePost.Digest) {
		t.Errorf("the refund's row reads %q, want Lock showing the digest it locks", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Tools page: %q", ps)
	}
	r.b.Screenshot(screenshots, "tools")

	act := func(id string) {
		t.Helper()
		r.b.Sent(chromedp.Click(chromedp.ID(id)))
		if e := browsertest.Run(r.b, chromedp.Evaluate[string](`(document.getElementById("tools-error") || {}).innerText || ""`)); e != "" {
			t.Fatalf("after %s the page refuses: %s", id, e)
		}
	}
	conn := connID(t, r, "lab")
	act("lock-" + conn + "-acme-refund-1")
	lock := toolLock(t, r, "lab", "acme.refund@1")
	if lock == nil || lock.Digest != pagePost.Digest || lock.Approval != "person" {
		t.Errorf("after Lock the refund's lock is %+v, want it at %s needing a person", lock, pagePost.Digest)
	}
	r.b.Do(chromedp.SetValue(chromedp.ID("approval-"+conn+"-acme-lookup-1"), "person"))
	act("set-approval-" + conn + "-acme-lookup-1")
	if l := toolLock(t, r, "lab", "acme.lookup@1"); l == nil || l.Approval != "person" {
		t.Errorf("after Set the lookup's lock is %+v, want approval person", l)
	}
	act("unlock-" + conn + "-acme-lookup-1")
	if l := toolLock(t, r, "lab", "acme.lookup@1"); l != nil {
		t.Errorf("after Unlock the lookup is still locked: %+v", l)
	}
	if got := row("acme.lookup@1"); !strings.Contains(got, "Lock at "+pageLookup.Digest) {
		t.Errorf("after Unlock the lookup's row reads %q, want Lock offered again", got)
	}

	r.b.Do(chromedp.SetValue(chromedp.ID("bind-name-"+conn), "shop"), chromedp.SetValue(chromedp.ID("bind-type-"+conn), "http"),
		chromedp.Click(chromedp.ID("bind-word-"+conn+"-order_total")))
	act("bind-" + conn)
	srcs, err := r.a.Directory().Sources(t.Context(), admin, "default", "lab")
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].Name != "shop" || srcs[0].Type != "http" || strings.Join(srcs[0].Words, ",") != "order_total" || srcs[0].Tier != contract.TierAttested {
		t.Errorf("the Sources of lab are %+v, want shop, http, attesting order_total", srcs)
	}
	if got := r.b.Text(`tr[id$="-shop"]`); !strings.Contains(got, "order_total") || !strings.Contains(got, "no") {
		t.Errorf("the shop row reads %q, want its word and that the worker's vault does not hold it", got)
	}
	r.b.Screenshot(screenshots, "tools-bound")
}

func connID(t *testing.T, r *pagesRig, name string) string {
	t.Helper()
	inv, err := r.a.ToolInventory(t.Context(), mustCaller(t, r.testServer), "default", name)
	if err != nil {
		t.Fatal(err)
	}
	return string(inv.Connection.ID)
}

func toolLock(t *testing.T, r *pagesRig, conn, tool string) *contract.ToolLock {
	t.Helper()
	ls, err := r.a.Directory().ToolLocks(t.Context(), mustCaller(t, r.testServer), "default", conn)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Tool == tool {
			return &l
		}
	}
	return nil
}
