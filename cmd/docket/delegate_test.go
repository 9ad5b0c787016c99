package main

import (
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestRefuseDelegate_MachineCommands: every command named as acting on the machine
// exists, and each refuses a delegate's credential with exit 5 before its flags are
// parsed, while a member's credential and the API verbs pass.
func TestRefuseDelegate_MachineCommands(t *testing.T) {
	parser, err := kong.New(&cli{}, kong.Name("docket"))
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{}
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		exists[strings.TrimPrefix(n.FullPath(), "docket ")] = true
		for _, ch := range n.Children {
			walk(ch)
		}
	}
	walk(parser.Model.Node)
	delegate := &env{Getenv: func(k string) string {
		if k == "DOCKET_TOKEN" {
			return "dkt_dlg_x"
		}
		return ""
	}}
	member := &env{Getenv: func(k string) string {
		if k == "DOCKET_TOKEN" {
			return "dkt_ses_x"
		}
		return ""
	}}
	for command := range machineCommands {
		t.Run(command, func(t *testing.T) {
			if !exists[command] {
				t.Fatalf("machineCommands names %q, which is no command", command)
			}
			args := append(strings.Fields(command), "--file", "missing.toml")
			err := refuseDelegate(delegate, args)
			if got := exitCode(err, &strings.Builder{}); got != exitDelegate {
				t.Errorf("a delegate's docket %s: exit %d (%v), want %d", command, got, err, exitDelegate)
			}
			if err := refuseDelegate(member, args); err != nil {
				t.Errorf("a member's docket %s refused: %v", command, err)
			}
		})
	}
	for _, api := range [][]string{{"agent", "list"}, {"ops", "--waiting"}, {"delegate", "create", "--life", "8h"}, {"operation", "list"}} {
		if err := refuseDelegate(delegate, api); err != nil {
			t.Errorf("a delegate's docket %v refused: %v", api, err)
		}
	}
}
