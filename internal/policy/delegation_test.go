package policy_test

import (
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/policy"
)

func TestDelegation_Covering(t *testing.T) {
	t.Parallel()
	d := &policy.Delegation{Classes: []policy.Class{
		{Name: "docs", Action: "write_file", Path: "docs/**/*.md"},
		{Name: "tests", Tool: "shell.run@1", CommandPrefix: "go test"},
		{Name: "calc", Action: "start", Agent: "calc"},
	}}
	call := func(action, tool, arg, value string) contract.RequestVector {
		return contract.RequestVector{Action: action, Tool: tool, Args: contract.Args{arg: contract.StringValue(value)}}
	}
	tests := []struct {
		name string
		v    contract.RequestVector
		want string // the covering class, "" for none
	}{
		{"a doc at the top", call("write_file", "", "path", "docs/a.md"), "docs"},
		{"a doc deep down", call("write_file", "", "path", "docs/x/y/a.md"), "docs"},
		{"not markdown", call("write_file", "", "path", "docs/a.go"), ""},
		{"outside docs", call("write_file", "", "path", "src/a.md"), ""},
		{"a .. segment", call("write_file", "", "path", "docs/../etc/a.md"), ""},
		{"absolute", call("write_file", "", "path", "/docs/a.md"), ""},
		{"another Action", call("delete_file", "", "path", "docs/a.md"), ""},
		{"a test run", call("run", "shell.run@1", "command", "go test ./..."), "tests"},
		{"the prefix alone", call("run", "shell.run@1", "command", "go test"), "tests"},
		{"a longer word", call("run", "shell.run@1", "command", "go testify"), ""},
		{"a second command", call("run", "shell.run@1", "command", "go test; rm -rf /"), ""},
		{"a pipe", call("run", "shell.run@1", "command", "go test | sh"), ""},
		{"a substitution", call("run", "shell.run@1", "command", "go test $(rm x)"), ""},
		{"a backquote", call("run", "shell.run@1", "command", "go test `rm x`"), ""},
		{"a redirection", call("run", "shell.run@1", "command", "go test > x"), ""},
		{"another Tool", call("run", "shell.other@1", "command", "go test"), ""},
		{"quoted words", call("run", "shell.run@1", "command", `"go" 'test' ./...`), "tests"},
		{"a tab between the words", call("run", "shell.run@1", "command", "go\ttest ./..."), "tests"},
		{"two spaces between the words", call("run", "shell.run@1", "command", "go  test ./..."), "tests"},
		{"leading spaces", call("run", "shell.run@1", "command", "  go test"), "tests"},
		{"the words in one quote", call("run", "shell.run@1", "command", `"go test" ./...`), ""},
		{"an assignment first", call("run", "shell.run@1", "command", "GOFLAGS=-exec=sh go test"), ""},
		{"a quote left open", call("run", "shell.run@1", "command", `go test "./...`), ""},
		{"and-then", call("run", "shell.run@1", "command", "go test && rm x"), ""},
		{"negated", call("run", "shell.run@1", "command", "! go test"), ""},
		{"a $'' word", call("run", "shell.run@1", "command", "go $'test'"), ""},
		{"work for calc", call("start", "", "agent", "calc"), "calc"},
		{"work for another Agent", call("start", "", "agent", "boss"), ""},
		{"no argument", contract.RequestVector{Action: "start"}, ""},
		{"a manual Agent's Board act", contract.RequestVector{Action: "start", Call: contract.ToolOpenCase,
			Args: contract.Args{"agent": contract.StringValue("calc")}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := d.Covering(tt.v)
			if got := map[bool]string{true: c.Name}[ok]; got != tt.want {
				t.Errorf("Covering = %q, want %q", got, tt.want)
			}
		})
	}
	// A class made without Parse's checks covers nothing its prefix would be refused for:
	// a prefix of one space once covered every command starting with two spaces.
	for _, prefix := range []string{" ", "", "sh", "FOO=1 go"} {
		loose := &policy.Delegation{Classes: []policy.Class{{Name: "loose", Tool: "shell.run@1", CommandPrefix: prefix}}}
		for _, cmd := range []string{"  rm -rf /", "sh -c 'rm -rf /'", "FOO=1 go run x"} {
			if c, ok := loose.Covering(call("run", "shell.run@1", "command", cmd)); ok {
				t.Errorf("a class with command_prefix %q covers %q as %q", prefix, cmd, c.Name)
			}
		}
	}
	if _, ok := policy.Builtin(contract.PolicyDelegation).Delegation.Covering(call("start", "", "agent", "calc")); ok {
		t.Error("the built-in delegation policy covers a request; it delegates nothing")
	}
}
