package agent_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const deploySkill = "---\nname: deploy\ndescription: How to ship a release of the shop.\n---\nRun the release checklist.\n"

// TestReadWorkspace: the instruction files from the repository's root down to the
// workspace, in that order, each under its path; none above the root; the skills of both
// skill folders, sorted, with another tool's front-matter keys left alone.
func TestReadWorkspace(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	writeTree(t, top, map[string]string{
		"AGENTS.md":                  "above the repository: never read",
		"repo/.git/HEAD":             "ref: refs/heads/main\n",
		"repo/AGENTS.md":             "Use metric units.",
		"repo/shop/CLAUDE.md":        "Prices are in cents.",
		"repo/shop/orders/AGENTS.md": "Never refund twice.",
		"repo/shop/orders/CLAUDE.md": "  \n",
		"repo/shop/orders/.docket/skills/deploy/SKILL.md": deploySkill,
		"repo/shop/orders/.claude/skills/review/SKILL.md": "---\nname: review\nallowed-tools: Read, Grep\ndescription: \"Review a change for refunds.\"\n---\nbody\n",
		"repo/shop/orders/.claude/skills/notes.txt":       "not a skill folder",
		"repo/shop/orders/.claude/skills/empty/README":    "a folder without SKILL.md",
	})
	ws, err := agent.ReadWorkspace(filepath.Join(top, "repo/shop/orders"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(top, "repo/AGENTS.md"), filepath.Join(top, "repo/shop/CLAUDE.md"), filepath.Join(top, "repo/shop/orders/AGENTS.md")}
	if diff := cmp.Diff(want, ws.Files); diff != "" {
		t.Errorf("instruction files (-want +got):\n%s", diff)
	}
	for i, w := range []string{"From " + want[0] + ":\nUse metric units.", "Prices are in cents.", "Never refund twice."} {
		if !strings.Contains(ws.Instructions, w) {
			t.Errorf("instructions do not hold %q:\n%s", w, ws.Instructions)
		}
		if i > 0 && strings.Index(ws.Instructions, w) < strings.Index(ws.Instructions, "Use metric units.") {
			t.Errorf("the root's instructions do not come first")
		}
	}
	if strings.Contains(ws.Instructions, "never read") {
		t.Errorf("an instruction file above the repository's root was read")
	}
	var names []string
	for _, s := range ws.Skills {
		names = append(names, s.Name+": "+s.Description)
	}
	if diff := cmp.Diff([]string{"deploy: How to ship a release of the shop.", "review: Review a change for refunds."}, names); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
}

func TestReadWorkspace_Refusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no front matter", map[string]string{".docket/skills/a/SKILL.md": "just text"}, "starts with front matter"},
		{"no description", map[string]string{".docket/skills/a/SKILL.md": "---\nname: a\n---\n"}, "no description"},
		{"a name with capitals", map[string]string{".docket/skills/a/SKILL.md": "---\nname: Deploy\ndescription: d\n---\n"}, "lower-case"},
		{"a name given twice", map[string]string{".docket/skills/a/SKILL.md": "---\nname: a\nname: b\ndescription: d\n---\n"}, "given twice"},
		{"front matter not ended", map[string]string{".docket/skills/a/SKILL.md": "---\nname: a\ndescription: d\n"}, "does not end"},
		{"two skills of one name", map[string]string{".docket/skills/a/SKILL.md": deploySkill, ".claude/skills/b/SKILL.md": deploySkill}, "both name the skill"},
		{"an instruction file too long", map[string]string{"AGENTS.md": strings.Repeat("x", agent.MaxInstructionFile+1)}, "over the"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			_, err := agent.ReadWorkspace(dir)
			if contract.CodeOf(err) != contract.CodeModelConfig || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReadWorkspace = %v, want model_config saying %q", err, tt.want)
			}
		})
	}
}

// TestLoop_Send_Skills: the model is offered ReadSkill beside the six and told each skill
// by name and description only; a skill's body reaches the model only in the answer to its
// ReadSkill, which never reaches the gateway; a path out of the skill's folder is refused.
func TestLoop_Send_Skills(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".docket/skills/deploy/SKILL.md":     deploySkill,
		".docket/skills/deploy/checklist.md": "1. tag 2. build",
		"secret.txt":                         "outside the skill",
	})
	ws, err := agent.ReadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t)
	p := script(t, `{"turns":[
	  {"calls":[{"tool":"ReadSkill","arguments":{"name":"deploy"}},
	            {"tool":"ReadSkill","arguments":{"name":"deploy","file":"checklist.md"}},
	            {"tool":"ReadSkill","arguments":{"name":"deploy","file":"../../../secret.txt"}},
	            {"tool":"QueryBoard"}]},
	  {"final":"shipped"}]}`)
	if _, err := r.loop(t, p, func(c *agent.LoopConfig) { c.Skills = ws.Skills }).Send(t.Context(), "c1", "ship it"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if diff := cmp.Diff([]string{"QueryBoard"}, tools(r.gw.Calls())); diff != "" {
		t.Errorf("calls sent to the gateway (-want +got):\n%s", diff)
	}
	reqs := p.requests()
	first := reqs[0]
	if !strings.Contains(first.System, "- deploy: How to ship a release of the shop.") || strings.Contains(first.System, "release checklist") {
		t.Errorf("the system prompt should list the skill, not hold its body:\n%s", first.System)
	}
	if !slices.ContainsFunc(first.Tools, func(d agent.ToolDef) bool { return d.Name == agent.ReadSkillTool }) {
		t.Errorf("ReadSkill is not offered")
	}
	res := results(t, r.store, "c1")
	if !strings.Contains(res[0].Content, "Run the release checklist.") || !strings.Contains(res[1].Content, "1. tag 2. build") {
		t.Errorf("ReadSkill answers = %q, %q", res[0].Content, res[1].Content)
	}
	if code, _, _ := head(t, res[2]); code != contract.CodeInvalidArgument || strings.Contains(res[2].Content, "outside the skill") {
		t.Errorf("a path out of the skill = %s, want invalid_argument and nothing read", res[2].Content)
	}
}
