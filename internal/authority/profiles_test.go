package authority_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

func newProfileProject(t *testing.T) (authoritytest.Project, store.Store) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return authoritytest.New(t, authoritytest.Options{Store: st, Agent: "calc"}), st
}

const digestA = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// TestProfile_Validate: a profile that cannot work is refused profile_invalid with a
// sentence naming the field, and nothing is recorded.
func TestProfile_Validate(t *testing.T) {
	p, _ := newProfileProject(t)
	ok := contract.ProfileSpec{Provider: "openai", ModelURL: "http://127.0.0.1:8080/v1", Model: "m", KeyFile: "agents/calc/model.key", Enabled: true}
	tests := []struct {
		name string
		edit func(*contract.ProfileSpec)
		want string // a word the teaching must hold; "" admits the profile
	}{
		{"openai with a loopback URL", func(*contract.ProfileSpec) {}, ""},
		{"anthropic at its public endpoint", func(s *contract.ProfileSpec) { s.Provider, s.ModelURL = "anthropic", "" }, ""},
		{"scripted", func(s *contract.ProfileSpec) { *s = contract.ProfileSpec{Provider: "scripted", Script: "calc.json"} }, ""},
		{"instructions with their digest", func(s *contract.ProfileSpec) { s.InstructionsFile, s.InstructionsDigest = "AGENTS.md", digestA }, ""},
		{"unknown provider", func(s *contract.ProfileSpec) { s.Provider = "gemini" }, "provider"},
		{"no model", func(s *contract.ProfileSpec) { s.Model = "" }, "model"},
		{"credentials in the URL", func(s *contract.ProfileSpec) { s.ModelURL = "https://u:sk-secret@host/v1" }, "credentials"},
		{"URL with a query", func(s *contract.ProfileSpec) { s.ModelURL = "https://host/v1?key=sk-secret" }, "query"},
		{"not http", func(s *contract.ProfileSpec) { s.ModelURL = "ftp://host" }, "http(s)"},
		{"emulated without URL", func(s *contract.ProfileSpec) { s.Provider, s.ModelURL = "emulated", "" }, "emulated"},
		{"scripted without script", func(s *contract.ProfileSpec) { *s = contract.ProfileSpec{Provider: "scripted"} }, "script"},
		{"scripted with a key file", func(s *contract.ProfileSpec) {
			*s = contract.ProfileSpec{Provider: "scripted", Script: "x", KeyFile: "k"}
		}, "keyFile"},
		{"script on openai", func(s *contract.ProfileSpec) { s.Script = "x" }, "script"},
		{"negative turns", func(s *contract.ProfileSpec) { s.MaxTurns = -1 }, "budgets"},
		{"NaN dollars", func(s *contract.ProfileSpec) { s.MaxUSD = math.NaN() }, "budgets"},
		{"a context window", func(s *contract.ProfileSpec) { s.ContextWindow = 65536 }, ""},
		{"a negative context window", func(s *contract.ProfileSpec) { s.ContextWindow = -1 }, "contextWindow"},
		{"a context window too small to hold the prompt", func(s *contract.ProfileSpec) { s.ContextWindow = 512 }, "contextWindow"},
		{"instructions without digest", func(s *contract.ProfileSpec) { s.InstructionsFile = "AGENTS.md" }, "instructionsDigest"},
		{"digest without instructions", func(s *contract.ProfileSpec) { s.InstructionsDigest = digestA }, "instructionsFile"},
		{"two-line key file", func(s *contract.ProfileSpec) { s.KeyFile = "a\nb" }, "keyFile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := ok
			tt.edit(&spec)
			got, err := p.A.SetAgentProfile(t.Context(), p.Admin, "default", "calc", spec)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("SetAgentProfile = %v, want it admitted", err)
				}
				if diff := cmp.Diff(spec, got.ProfileSpec); diff != "" {
					t.Errorf("profile (-want +got):\n%s", diff)
				}
				return
			}
			ce, isCE := err.(*contract.Error)
			if !isCE || ce.Code != contract.CodeProfileInvalid || !strings.Contains(ce.Teaching, tt.want) {
				t.Fatalf("SetAgentProfile = %v, want profile_invalid naming %q", err, tt.want)
			}
			if strings.Contains(ce.Teaching, "sk-secret") {
				t.Errorf("the refusal echoes the URL's secret: %s", ce.Teaching)
			}
		})
	}
}

// TestProfile_SetShowReport: a member sets a profile, which a second authority over the
// same store reads from the log; docket start's reports of the runtime's state show on
// it; an Agent may not set its own profile; a revoked Agent's profile is gone.
func TestProfile_SetShowReport(t *testing.T) {
	p, st := newProfileProject(t)
	ctx := t.Context()
	if _, err := p.A.AgentProfile(ctx, p.Admin, "default", "calc"); contract.CodeOf(err) != contract.CodeNotFound {
		t.Fatalf("AgentProfile before any = %v, want not_found", err)
	}
	spec := contract.ProfileSpec{Provider: "openai", ModelURL: "http://127.0.0.1:8080", Model: "m", MaxTurns: 20, Enabled: true}
	if _, err := p.A.SetAgentProfile(ctx, p.Agent, "default", "calc", spec); contract.CodeOf(err) != contract.CodeForbidden {
		t.Errorf("an Agent setting its own profile = %v, want forbidden", err)
	}
	if _, err := p.A.ReportAgentRuntime(ctx, p.Admin, "default", "calc", contract.RuntimeStatus{State: "running"}); contract.CodeOf(err) != contract.CodeNotFound {
		t.Errorf("a report before any profile = %v, want not_found", err)
	}
	if _, err := p.A.SetAgentProfile(ctx, p.Admin, "default", "calc", spec); err != nil {
		t.Fatal(err)
	}
	if _, err := p.A.ReportAgentRuntime(ctx, p.Admin, "default", "calc", contract.RuntimeStatus{State: "sleeping"}); contract.CodeOf(err) != contract.CodeInvalidArgument {
		t.Errorf("a report of an unknown state = %v, want invalid_argument", err)
	}
	rs := contract.RuntimeStatus{State: contract.RuntimeRestarting, Restarts: 2, Reason: "exit status 1"}
	if _, err := p.A.ReportAgentRuntime(ctx, p.Admin, "default", "calc", rs); err != nil {
		t.Fatal(err)
	}
	// A second authority over the same store reads it all from the log.
	b := authoritytest.Bare(t, authoritytest.Options{Store: st, Key: identity.Key{1}})
	list, err := b.AgentProfiles(ctx, p.Admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.AgentProfile{{AgentName: "calc", ProfileSpec: spec, Runtime: &rs}}
	if diff := cmp.Diff(want, list, cmpopts.IgnoreFields(contract.AgentProfile{}, "Agent", "SetBy", "SetAt"),
		cmpopts.IgnoreFields(contract.RuntimeStatus{}, "Reported")); diff != "" {
		t.Errorf("profiles (-want +got):\n%s", diff)
	}
	if len(list) == 1 && (list[0].SetBy == "" || list[0].Runtime.Reported.IsZero()) {
		t.Errorf("profile %+v lacks who set it or when the runtime was reported", list[0])
	}
	if _, err := p.A.Directory().RevokeAgent(ctx, p.Admin, "default", "calc"); err != nil {
		t.Fatal(err)
	}
	if list, err := p.A.AgentProfiles(ctx, p.Admin, "default"); err != nil || len(list) != 0 {
		t.Errorf("profiles after the revocation = %+v, %v; want none", list, err)
	}
	if _, err := p.A.SetAgentProfile(ctx, p.Admin, "default", "calc", spec); contract.CodeOf(err) != contract.CodeNotFound {
		t.Errorf("a profile for a revoked Agent = %v, want not_found", err)
	}
}
