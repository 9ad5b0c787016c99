package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/policy"
)

func TestParse_Examples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want policy.Document
	}{
		{"delegation.toml", policy.Document{Kind: contract.PolicyDelegation, Delegation: &policy.Delegation{Classes: []policy.Class{
			{Name: "docs edits", Action: "write_file", Path: "docs/**/*.md"},
			{Name: "test runs", Tool: "shell.run@1", CommandPrefix: "go test"},
			{Name: "calc work", Action: "start_calc", Agent: "calc"},
		}}}},
		{"autonomy.toml", policy.Document{Kind: contract.PolicyAutonomy, Autonomy: &policy.Autonomy{DefaultLevel: policy.LevelAttended,
			MaxOperationsPerDay: 50, RequireAcknowledgement: true, Acknowledgement: "An unattended Agent writes at any hour without a person watching."}}},
		{"recovery.toml", policy.Document{Kind: contract.PolicyRecovery, Recovery: &policy.Recovery{RetryFailed: true, MaxAttempts: 2, RetryBy: policy.RetryByAuthority}}},
		{"delegate.toml", policy.Document{Kind: contract.PolicyDelegate, Delegate: &policy.Delegate{Exempt: []string{"tool.lock", "source.bind"}}}},
		{"artifact.toml", policy.Document{Kind: contract.PolicyArtifact, Artifact: &policy.Artifact{RetentionDays: 7}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := policy.Parse(tt.file, src)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParse_Builtins(t *testing.T) {
	t.Parallel()
	for _, k := range contract.PolicyKinds {
		got, err := policy.Parse("builtin", []byte(policy.BuiltinText(k)))
		if err != nil {
			t.Fatalf("built-in %s: %v", k, err)
		}
		if diff := cmp.Diff(policy.Builtin(k), got); diff != "" {
			t.Errorf("built-in %s text and document differ (-want +got):\n%s", k, diff)
		}
	}
}

func TestParse_Refusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		where     string // the teaching starts with it
		says      string // and contains it
	}{
		{"not TOML", "[delegation_policy\n", "p.toml:", "not valid TOML"},
		{"no policy", "# nothing\n", "p.toml:", "holds no policy"},
		{"two policies", "[delegation_policy]\n[recovery_policy]\n", "p.toml:", "holds 2 policies"},
		{"unknown key", "[recovery_policy]\nretry_failed = true\nmax_attempt = 2\n", "p.toml:3:", `unknown key "recovery_policy.max_attempt" (did you mean "recovery_policy.max_attempts"?)`},
		{"case-variant key", "[recovery_policy]\nMax_Attempts = 2\n", "p.toml:2:", `unknown key "recovery_policy.Max_Attempts" (did you mean "recovery_policy.max_attempts"?)`},
		{"no retention", "[artifact_policy]\nretention_days = 0\n", "p.toml:2:", "retention_days is 0; use 1 to 3650 days, or leave the key out for the server's retention"},
		{"retention past ten years", "[artifact_policy]\nretention_days = 3651\n", "p.toml:2:", "retention_days is 3651"},
		{"retention as a duration", "[artifact_policy]\nretention_days = \"30d\"\n", "p.toml:2:", "the value of artifact_policy.retention_days is wrong"},
		{"retention misspelt", "[artifact_policy]\nretention_day = 30\n", "p.toml:2:", `(did you mean "artifact_policy.retention_days"?)`},
		{"duplicate key", "[recovery_policy]\nmax_attempts = 2\nmax_attempts = 3\n", "p.toml:3:", "not valid TOML"},
		{"wrong type", "[recovery_policy]\nmax_attempts = \"3\"\n", "p.toml:2:", "the value of recovery_policy.max_attempts is wrong: it is a string, but it takes a whole number: write it without quotes, e.g. 3"},
		{"a string for a list", "[delegate_policy]\nexempt = \"confirm\"\n", "p.toml:2:", `the value of delegate_policy.exempt is wrong: it is a string, but it takes a list: write it as ["…", "…"]`},
		{"class with both", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\naction = \"a\"\npath = \"docs/*\"\nagent = \"calc\"\n",
			"p.toml:2:", "exactly one of path, command_prefix and agent"},
		{"class with neither", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\naction = \"a\"\n",
			"p.toml:2:", "exactly one of path, command_prefix and agent"},
		{"class with action and tool", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\naction = \"a\"\ntool = \"t@1\"\nagent = \"calc\"\n",
			"p.toml:2:", "exactly one of action and tool"},
		{"second class unnamed", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\naction = \"a\"\nagent = \"calc\"\n[[delegation_policy.class]]\naction = \"a\"\nagent = \"calc\"\n",
			"p.toml:6:", "class 2 has no name"},
		{"path leaves the Source", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\naction = \"a\"\npath = \"docs/../etc/*\"\n",
			"p.toml:2:", ".. segment"},
		{"absolute path", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\naction = \"a\"\npath = \"/etc/*\"\n", "p.toml:2:", "absolute"},
		{"shell syntax", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"go test; rm\"\n",
			"p.toml:2:", "shell syntax"},
		{"empty prefix", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"\"\n", "p.toml:2:", "empty string"},
		{"whitespace prefix", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \" \"\n", "p.toml:2:", "only whitespace"},
		{"prefix with a leading space", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \" go test\"\n", "p.toml:2:", "starts or ends with whitespace"},
		{"prefix with a trailing space", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"go test \"\n", "p.toml:2:", "starts or ends with whitespace"},
		{"prefix with a tab", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"go\\ttest\"\n", "p.toml:2:", "control character"},
		{"prefix with two spaces", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"go  test\"\n", "p.toml:2:", "one space between them"},
		{"prefix assigns a variable", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"FOO=1 go test\"\n", "p.toml:2:", "assigns a variable"},
		{"prefix names sh", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"sh\"\n", "p.toml:2:", "names sh"},
		{"prefix names bash -c", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"bash -c\"\n", "p.toml:2:", "names bash"},
		{"prefix names env", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"env go test\"\n", "p.toml:2:", "names env"},
		{"prefix names /usr/bin/env", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"/usr/bin/env\"\n", "p.toml:2:", "names /usr/bin/env"},
		{"prefix names eval", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"eval\"\n", "p.toml:2:", "names eval"},
		{"prefix names exec", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"exec go\"\n", "p.toml:2:", "names exec"},
		{"prefix names xargs", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"xargs\"\n", "p.toml:2:", "names xargs"},
		{"prefix names sudo", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"sudo go test\"\n", "p.toml:2:", "names sudo"},
		{"prefix names nohup", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"nohup\"\n", "p.toml:2:", "names nohup"},
		{"prefix names timeout", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"timeout 10\"\n", "p.toml:2:", "names timeout"},
		{"prefix names nice", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"nice\"\n", "p.toml:2:", "names nice"},
		{"prefix names python3", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"python3 -c\"\n", "p.toml:2:", "an interpreter"},
		{"prefix names perl", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"perl -e\"\n", "p.toml:2:", "an interpreter"},
		{"prefix with a glob", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"go test *\"\n", "p.toml:2:", "a pattern"},
		{"prefix with quotes", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\ntool = \"t@1\"\ncommand_prefix = \"'go' test\"\n", "p.toml:2:", "a quote"},
		{"empty path", "[delegation_policy]\n[[delegation_policy.class]]\nname = \"x\"\naction = \"a\"\npath = \"\"\nagent = \"calc\"\n", "p.toml:2:", "sets path to the empty string"},
		{"unknown level", "[autonomy_policy]\ndefault_level = \"sometimes\"\n", "p.toml:2:", "not a level"},
		{"acknowledgement without text", "[autonomy_policy]\nrequire_acknowledgement = true\n", "p.toml:2:", "needs acknowledgement"},
		{"attempts out of range", "[recovery_policy]\nmax_attempts = 0\n", "p.toml:2:", "use 1 to 10"},
		{"unknown retrier", "[recovery_policy]\nmax_attempts = 2\nretry_by = \"worker\"\n", "p.toml:3:", `retry_by is "worker"`},
		{"exempts a member-only operation", "[delegate_policy]\nexempt = [\n  \"tool.lock\",\n  \"member.create\",\n]\n", "p.toml:4:", "member-only"},
		{"exempts a policy change", "[delegate_policy]\nexempt = [\"policy.publish\"]\n", "p.toml:2:", "publishing any policy"},
		{"exempts confirming a card", "[delegate_policy]\nexempt = ['card.confirm']\n", "p.toml:2:", "member-only"},
		{"exempts an operational one", "[delegate_policy]\nexempt = [\"operation.retry\"]\n", "p.toml:2:", "without a card already"},
		{"exempts no operation", "[delegate_policy]\n\nexempt = [\"agent.make\"]\n", "p.toml:3:", "is no operation"},
		{"exempts a decision", "[delegate_policy]\nexempt = [\"request.decide\"]\n", "p.toml:2:", "stays a card"},
		{"exempts creating an Agent", "[delegate_policy]\nexempt = [\n  \"tool.lock\",\n  \"agent.create\",\n]\n", "p.toml:4:", "makes a credential"},
		{"exempts replacing a token", "[delegate_policy]\nexempt = [\"agent.token\"]\n", "p.toml:2:", "makes a credential"},
		{"exempts creating a Connection", "[delegate_policy]\nexempt = [\"source.bind\", \"connection.create\"]\n", "p.toml:2:", "makes a credential"},
		{"exempts creating a delegate", "[delegate_policy]\nexempt = [\"delegate.create\"]\n", "p.toml:2:", "member-only"},
		{"exempts twice", "[delegate_policy]\nexempt = [\"tool.lock\", \"tool.lock\"]\n", "p.toml:2:", "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.Parse("p.toml", []byte(tt.src))
			if contract.CodeOf(err) != contract.CodePolicyInvalid {
				t.Fatalf("Parse = %v, want policy_invalid", err)
			}
			e := err.(*contract.Error)
			if !strings.HasPrefix(e.Teaching, tt.where) || !strings.Contains(e.Teaching, tt.says) {
				t.Errorf("teaching = %q, want it to start with %q and say %q", e.Teaching, tt.where, tt.says)
			}
		})
	}
}

// FuzzParse: no input panics, and every refusal is policy_invalid naming the file.
func FuzzParse(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".toml") {
			src, err := os.ReadFile(filepath.Join("testdata", e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		_, err := policy.Parse("f.toml", src)
		if err == nil {
			return
		}
		e, ok := err.(*contract.Error)
		if !ok || e.Code != contract.CodePolicyInvalid || !strings.HasPrefix(e.Teaching, "f.toml") {
			t.Fatalf("Parse refusal = %v, want policy_invalid naming the file", err)
		}
	})
}
