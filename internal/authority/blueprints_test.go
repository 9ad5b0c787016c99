package authority_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// scriptedWith is a scripted profile limited to allow.
func scriptedWith(allow *contract.AllowList) contract.ProfileSpec {
	return contract.ProfileSpec{Provider: contract.ProviderScripted, Script: "calc.json", Allow: allow}
}

// viewEntry returns the Action name as c's View lists it, focused on focus.
func viewEntry(t *testing.T, f *opsFixture, c identity.Caller, name string, focus ...contract.CaseID) (contract.ActionEntry, bool) {
	t.Helper()
	ans, err := f.ops.Call(t.Context(), c, operation.Call{Tool: contract.ToolQueryBoard, Input: &contract.QueryBoardInput{Focus: focus}, Focus: focus})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ans.Result.View.Actions.Items, func(a contract.ActionEntry) bool { return a.Name == name })
	if i < 0 {
		return contract.ActionEntry{}, false
	}
	return ans.Result.View.Actions.Items[i], true
}

// TestAuthority_ProfileAllowList: an Agent whose profile names the Case Types and Actions
// it may use sees every other Action blocked not_in_profile in its View, and admission
// refuses each door to the rest (OpenCase, ApplyAction, a built-in Action, CloseCase)
// with not_in_profile and no Operation; without an allow-list it is as before.
func TestAuthority_ProfileAllowList(t *testing.T) {
	f := newGrantFixture(t)
	ctx := t.Context()
	f.roster(t, "ann", "reader", "")
	ann := f.openAccess(t, "ann") // before the allow-list: Operation 1
	if _, err := f.a.SetAgentProfile(ctx, f.admin, "default", "calc", scriptedWith(&contract.AllowList{CaseTypes: []string{"access"}, Actions: []string{"grant"}})); err != nil {
		t.Fatal(err)
	}

	if e, _ := viewEntry(t, f, f.agent, "mark"); e.State != contract.ActionBlocked || e.Reason != contract.BlockNotInProfile || !strings.Contains(e.Detail, "grant") {
		t.Errorf("mark in the View = %+v, want blocked not_in_profile naming what the profile allows", e)
	}
	if e, _ := viewEntry(t, f, f.agent, "grant", ann); e.Reason == contract.BlockNotInProfile {
		t.Errorf("grant in Case access = %+v, want it not blocked by the profile", e)
	}

	if _, err := f.a.PublishPolicy(ctx, f.admin, "default", contract.PublishPolicyRequest{File: "delegation.toml", Text: askPolicy}); err != nil {
		t.Fatal(err)
	}
	if e, ok := viewEntry(t, f, f.agent, contract.ActionAsk); !ok || e.State != contract.ActionBlocked || e.Reason != contract.BlockNotInProfile {
		t.Errorf("docket.ask under a policy naming it = %+v (listed %v), want blocked not_in_profile", e, ok)
	}
	refused := func(name string, tool string, in any, want string) {
		t.Helper()
		ans, err := f.ops.Call(ctx, f.agent, operation.Call{Tool: tool, Input: in, Delivered: func(int64) bool { return true }})
		if err != nil {
			t.Fatal(err)
		}
		if ans.Result.ErrorCode != contract.CodeNotInProfile || !strings.Contains(ans.Result.Teaching, want) || ans.Meta.Ordinal != 0 {
			t.Errorf("%s = %s %q (ordinal %d), want not_in_profile naming %q and no Operation", name, ans.Result.ErrorCode, ans.Result.Teaching, ans.Meta.Ordinal, want)
		}
	}
	refused("ApplyAction mark", contract.ToolApplyAction, &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue("x")}}, "mark")
	refused("OpenCase exploration", contract.ToolOpenCase, &contract.OpenCaseInput{CaseType: "exploration", BusinessKey: contract.Args{"topic": contract.StringValue("x")}}, "exploration")
	refused("docket.ask", contract.ToolApplyAction, &contract.ApplyActionInput{Action: contract.ActionAsk,
		Params: contract.Args{"agent": contract.StringValue("writer"), "task": contract.StringValue("x")}}, contract.ActionAsk)
	refused("docket.decide", contract.ToolApplyAction, &contract.ApplyActionInput{Action: contract.ActionDecide}, contract.ActionDecide)
	refused("docket.retry", contract.ToolApplyAction, &contract.ApplyActionInput{Action: contract.ActionRetry}, contract.ActionRetry)

	// Only Actions: a Case of another type is not refused for its type, but its Actions are.
	if _, err := f.a.SetAgentProfile(ctx, f.admin, "default", "calc", scriptedWith(&contract.AllowList{Actions: []string{"mark"}})); err != nil {
		t.Fatal(err)
	}
	refused("grant outside the Actions", contract.ToolApplyAction, grantCall(ann, "x"), "grant")
	if e, _ := viewEntry(t, f, f.agent, "mark"); e.Reason == contract.BlockNotInProfile {
		t.Errorf("mark once allowed = %+v, want it not blocked by the profile", e)
	}
	// Only Case Types: the Case Type decides, whatever the Action.
	if _, err := f.a.SetAgentProfile(ctx, f.admin, "default", "calc", scriptedWith(&contract.AllowList{CaseTypes: []string{"exploration"}})); err != nil {
		t.Fatal(err)
	}
	refused("grant in a Case of access", contract.ToolApplyAction, grantCall(ann, "x"), "access")
	refused("CloseCase of access", contract.ToolCloseCase, &contract.CloseCaseInput{CaseID: ann, Disposition: contract.DispositionCancelled, Reason: "x"}, "access")
	if e, _ := viewEntry(t, f, f.agent, "grant", ann); e.Reason != contract.BlockNotInProfile {
		t.Errorf("grant focused on Case access = %+v, want blocked not_in_profile", e)
	}

	// No allow-list: as before.
	if _, err := f.a.SetAgentProfile(ctx, f.admin, "default", "calc", scriptedWith(nil)); err != nil {
		t.Fatal(err)
	}
	if e, _ := viewEntry(t, f, f.agent, "mark"); e.Reason == contract.BlockNotInProfile {
		t.Errorf("mark without an allow-list = %+v, want it not blocked by the profile", e)
	}
	ans, err := f.ops.Call(ctx, f.agent, operation.Call{Tool: contract.ToolApplyAction, Input: grantCall(ann, "x"), Delivered: func(int64) bool { return true }})
	if err != nil || state(ans) != contract.OpWaitingForDecision {
		t.Fatalf("grant without an allow-list = %+v, %v; want it waiting for a decision", ans.Result, err)
	}
}

// TestAuthority_ProfileAllowListChecked: a profile's allow-list may name only what the
// Board declares or a built-in Action; anything else is refused profile_invalid.
func TestAuthority_ProfileAllowListChecked(t *testing.T) {
	f := newGrantFixture(t)
	tests := []struct {
		name  string
		allow contract.AllowList
		want  string // in the teaching; "" admits
	}{
		{"declared", contract.AllowList{CaseTypes: []string{"access", "exploration"}, Actions: []string{"grant", "mark", "docket.ask", "docket.decide", "docket.retry"}}, ""},
		{"an unknown Case Type", contract.AllowList{CaseTypes: []string{"payroll"}}, "payroll"},
		{"an unknown Action", contract.AllowList{Actions: []string{"wire_money"}}, "wire_money"},
		{"a name twice", contract.AllowList{Actions: []string{"mark", "mark"}}, "twice"},
		{"a name with a space", contract.AllowList{Actions: []string{"a b"}}, "allow.actions[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.a.SetAgentProfile(t.Context(), f.admin, "default", "calc", scriptedWith(&tt.allow))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("SetAgentProfile = %v, want it admitted", err)
				}
				return
			}
			if contract.CodeOf(err) != contract.CodeProfileInvalid || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("SetAgentProfile = %v, want profile_invalid naming %q", err, tt.want)
			}
		})
	}
}

// researcher is a valid blueprint of the grant fixture's project.
func researcher() contract.BlueprintSpec {
	return contract.BlueprintSpec{Description: "Grants access; nothing else.", Profile: contract.ProfileSpec{
		Provider: contract.ProviderOpenAI, ModelURL: "http://127.0.0.1:8080/v1", Model: "qwen2.5", Thinking: contract.ThinkingOn,
		InstructionsFile: "AGENTS.md", InstructionsDigest: digestA,
		Allow: &contract.AllowList{CaseTypes: []string{"access"}, Actions: []string{"grant", contract.ActionAsk}}}}
}

// TestAuthority_SetBlueprint: a blueprint is checked when it is set, and each refusal
// names the field and the fix with its code; nothing refused is recorded.
func TestAuthority_SetBlueprint(t *testing.T) {
	f := newGrantFixture(t)
	tests := []struct {
		name string
		bp   string
		edit func(*contract.BlueprintSpec)
		code contract.Code
		want string // in the teaching
	}{
		{"valid", "researcher", func(*contract.BlueprintSpec) {}, "", ""},
		{"a known model at its public endpoint", "writer", func(s *contract.BlueprintSpec) { s.Profile.ModelURL, s.Profile.Model = "", "gpt-4.1-mini" }, "", ""},
		{"scripted", "scripted", func(s *contract.BlueprintSpec) {
			s.Profile = contract.ProfileSpec{Provider: contract.ProviderScripted, Script: "s.json", Allow: s.Profile.Allow}
		}, "", ""},
		{"a name with upper case", "Researcher", func(*contract.BlueprintSpec) {}, contract.CodeBlueprintInvalid, "name"},
		{"a name too long", strings.Repeat("a", contract.MaxBlueprintName+1), func(*contract.BlueprintSpec) {}, contract.CodeBlueprintInvalid, "name"},
		{"a two-line description", "x", func(s *contract.BlueprintSpec) { s.Description = "a\nb" }, contract.CodeBlueprintInvalid, "description"},
		{"a key file", "x", func(s *contract.BlueprintSpec) { s.Profile.KeyFile = "k" }, contract.CodeBlueprintInvalid, "keyFile"},
		{"enabled", "x", func(s *contract.BlueprintSpec) { s.Profile.Enabled = true }, contract.CodeBlueprintInvalid, "enabled"},
		{"no allow-list", "x", func(s *contract.BlueprintSpec) { s.Profile.Allow = nil }, contract.CodeBlueprintInvalid, "allow"},
		{"a profile that cannot work", "x", func(s *contract.BlueprintSpec) { s.Profile.Provider = "gemini" }, contract.CodeBlueprintInvalid, "provider"},
		{"instructions without their digest", "x", func(s *contract.BlueprintSpec) { s.Profile.InstructionsDigest = "" }, contract.CodeBlueprintInvalid, "instructionsDigest"},
		{"an unknown model at a public endpoint", "x", func(s *contract.BlueprintSpec) { s.Profile.ModelURL, s.Profile.Model = "", "gpt-9" }, contract.CodeBlueprintInvalid, "modelUrl"},
		{"an undeclared Case Type", "x", func(s *contract.BlueprintSpec) { s.Profile.Allow.CaseTypes = []string{"payroll"} }, contract.CodeBlueprintInvalid, "payroll"},
		{"an undeclared Action", "x", func(s *contract.BlueprintSpec) { s.Profile.Allow.Actions = []string{"wire_money"} }, contract.CodeBlueprintInvalid, "wire_money"},
		{"too many Actions", "x", func(s *contract.BlueprintSpec) {
			s.Profile.Allow.Actions = make([]string, contract.MaxAllowNames+1)
		}, contract.CodeBlueprintInvalid, "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := researcher()
			tt.edit(&spec)
			got, err := f.a.SetBlueprint(t.Context(), f.admin, "default", tt.bp, spec)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("SetBlueprint = %v, want it set", err)
				}
				if got.Name != tt.bp || got.Digest == (contract.Digest{}) || got.SetBy != f.admin.Principal() {
					t.Errorf("blueprint = %+v, want its name, digest and setter", got)
				}
				return
			}
			if contract.CodeOf(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("SetBlueprint = %v, want %s naming %q", err, tt.code, tt.want)
			}
			if _, err := f.a.Blueprint(t.Context(), f.admin, "default", tt.bp); contract.CodeOf(err) != contract.CodeNotFound {
				t.Errorf("refused blueprint read back = %v, want not_found", err)
			}
		})
	}
	if _, err := f.a.SetBlueprint(t.Context(), f.agent, "default", "y", researcher()); contract.CodeOf(err) != contract.CodeForbidden {
		t.Errorf("SetBlueprint by an Agent = %v, want forbidden", err)
	}
}

// TestAuthority_ProfileFromBlueprint: a profile made from a blueprint copies it with the
// Agent's own key file, records the blueprint and its digest, and is limited by its
// allow-list; setting the blueprint again or removing it changes no profile, and the
// profile says so; a stale digest, and an allow-list naming what is no longer declared,
// are refused.
func TestAuthority_ProfileFromBlueprint(t *testing.T) {
	f := newGrantFixture(t)
	ctx := t.Context()
	bp, err := f.a.SetBlueprint(ctx, f.admin, "default", "researcher", researcher())
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.a.SetAgentProfileFromBlueprint(ctx, f.admin, "default", "calc", contract.FromBlueprint{Blueprint: "researcher", Digest: &bp.Digest, KeyFile: "/k/calc.key", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	want := researcher().Profile
	want.KeyFile, want.Enabled = "/k/calc.key", true
	if diff := cmp.Diff(want, p.ProfileSpec); diff != "" {
		t.Errorf("profile from the blueprint (-want +got):\n%s", diff)
	}
	if p.Blueprint == nil || *p.Blueprint != (contract.BlueprintRef{Name: "researcher", Digest: bp.Digest}) || p.BlueprintState != contract.BlueprintCurrent {
		t.Errorf("profile's blueprint = %+v %s, want researcher at %s, current", p.Blueprint, p.BlueprintState, bp.Digest)
	}
	if e, _ := viewEntry(t, f, f.agent, "mark"); e.Reason != contract.BlockNotInProfile {
		t.Errorf("mark under the blueprint's allow-list = %+v, want blocked not_in_profile", e)
	}

	// Stopping its runtime keeps it the blueprint's copy; another model makes it its own.
	stopped := p.ProfileSpec
	stopped.Enabled = false
	if p, err = f.a.SetAgentProfile(ctx, f.admin, "default", "calc", stopped); err != nil || p.Blueprint == nil || p.BlueprintState != contract.BlueprintCurrent {
		t.Errorf("profile stopped = %+v %s, %v; want it still researcher's copy", p.Blueprint, p.BlueprintState, err)
	}
	own := stopped
	own.Model = "llama"
	if p, err = f.a.SetAgentProfile(ctx, f.admin, "default", "calc", own); err != nil || p.Blueprint != nil {
		t.Errorf("profile with its own model = %+v, %v; want no blueprint", p.Blueprint, err)
	}
	if _, err := f.a.SetAgentProfileFromBlueprint(ctx, f.admin, "default", "calc", contract.FromBlueprint{Blueprint: "researcher", KeyFile: "/k/calc.key", Enabled: true}); err != nil {
		t.Fatal(err)
	}

	changed := researcher()
	changed.Profile.Model = "qwen3"
	if _, err := f.a.SetBlueprint(ctx, f.admin, "default", "researcher", changed); err != nil {
		t.Fatal(err)
	}
	p, err = f.a.AgentProfile(ctx, f.admin, "default", "calc")
	if err != nil || p.Model != "qwen2.5" || p.BlueprintState != contract.BlueprintChanged {
		t.Errorf("profile after the blueprint changed = model %s, state %s, %v; want its copy (qwen2.5), changed", p.Model, p.BlueprintState, err)
	}
	_, err = f.a.SetAgentProfileFromBlueprint(ctx, f.admin, "default", "calc", contract.FromBlueprint{Blueprint: "researcher", Digest: &bp.Digest})
	if contract.CodeOf(err) != contract.CodeBlueprintChanged {
		t.Errorf("from the blueprint at its old digest = %v, want blueprint_changed", err)
	}
	if err := f.a.RemoveBlueprint(ctx, f.admin, "default", "researcher"); err != nil {
		t.Fatal(err)
	}
	if p, err = f.a.AgentProfile(ctx, f.admin, "default", "calc"); err != nil || p.BlueprintState != contract.BlueprintRemoved || p.Model != "qwen2.5" {
		t.Errorf("profile after the blueprint was removed = %s %s, %v; want its copy, removed", p.Model, p.BlueprintState, err)
	}
	if err := f.a.RemoveBlueprint(ctx, f.admin, "default", "researcher"); contract.CodeOf(err) != contract.CodeNotFound {
		t.Errorf("removing it twice = %v, want not_found", err)
	}
	if _, err := f.a.SetAgentProfileFromBlueprint(ctx, f.admin, "default", "calc", contract.FromBlueprint{Blueprint: "researcher"}); contract.CodeOf(err) != contract.CodeNotFound {
		t.Errorf("from a removed blueprint = %v, want not_found", err)
	}

	// A direct Action the blueprint allows, unlocked since: the check at creation refuses.
	notesWorker(t, f, true)
	direct := researcher()
	direct.Profile.Allow.Actions = []string{"acme.notes.list@1"}
	if _, err := f.a.SetBlueprint(ctx, f.admin, "default", "notes", direct); err != nil {
		t.Fatalf("a blueprint allowing a locked direct Action: %v", err)
	}
	if _, err := f.a.Directory().UnlockTool(ctx, f.admin, "default", "notes", "acme.notes.list@1"); err != nil {
		t.Fatal(err)
	}
	_, err = f.a.SetAgentProfileFromBlueprint(ctx, f.admin, "default", "calc", contract.FromBlueprint{Blueprint: "notes"})
	if contract.CodeOf(err) != contract.CodeBlueprintInvalid || !strings.Contains(err.Error(), "acme.notes.list@1") {
		t.Errorf("from a blueprint whose Action is gone = %v, want blueprint_invalid naming it", err)
	}
	list, err := f.a.Blueprints(ctx, f.admin, "default")
	if err != nil || len(list) != 1 || list[0].Name != "notes" {
		t.Errorf("Blueprints = %+v, %v; want notes alone", list, err)
	}
}

// TestAuthority_ProfileAllowListAcrossInstances: an allow-list set through one docket
// serve holds at the other over the same store, and so do a blueprint and its copy.
func TestAuthority_ProfileAllowListAcrossInstances(t *testing.T) {
	f := newOpsFixture(t, time.Minute)
	ctx := t.Context()
	other := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: identity.Key{7}, Now: f.clock.Now})
	otherOps := authority.NewOperations(other, operation.Config{})
	t.Cleanup(otherOps.Operations().Close)
	mark := &contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": contract.StringValue("a")}}
	view := func() contract.ActionEntry {
		t.Helper()
		ans, err := otherOps.Call(ctx, f.agent, operation.Call{Tool: contract.ToolQueryBoard, Input: &contract.QueryBoardInput{}})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(ans.Result.View.Actions.Items, func(a contract.ActionEntry) bool { return a.Name == "mark" })
		if i < 0 {
			t.Fatalf("the View lists no mark: %+v", ans.Result.View.Actions)
		}
		return ans.Result.View.Actions.Items[i]
	}
	if e := view(); e.Reason == contract.BlockNotInProfile {
		t.Fatalf("mark before any allow-list = %+v", e)
	}
	spec := contract.BlueprintSpec{Profile: scriptedWith(&contract.AllowList{Actions: []string{"fetch"}})}
	if _, err := f.a.SetBlueprint(ctx, f.admin, "default", "fetcher", spec); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.SetAgentProfileFromBlueprint(ctx, f.admin, "default", "calc", contract.FromBlueprint{Blueprint: "fetcher"}); err != nil {
		t.Fatal(err)
	}
	if e := view(); e.Reason != contract.BlockNotInProfile {
		t.Errorf("mark in the other instance's View = %+v, want blocked not_in_profile", e)
	}
	ans, err := otherOps.Call(ctx, f.agent, operation.Call{Tool: contract.ToolApplyAction, Input: mark, Delivered: func(int64) bool { return true }})
	if err != nil || ans.Result.ErrorCode != contract.CodeNotInProfile {
		t.Errorf("mark at the other instance = %s %q, %v; want not_in_profile", ans.Result.ErrorCode, ans.Result.Teaching, err)
	}
	if p, err := other.AgentProfile(ctx, f.admin, "default", "calc"); err != nil || p.Blueprint == nil || p.BlueprintState != contract.BlueprintCurrent {
		t.Errorf("the profile at the other instance = %+v, %v; want fetcher's current copy", p, err)
	}
}
