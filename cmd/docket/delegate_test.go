package main

import (
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestRefuseDelegate_Commands: a delegate's credential runs only the commands listed as
// reaching the authority over its API; every other command — the ones that start a
// process, read the data dir or read a file the caller names — refuses it with exit 5
// before its flags are parsed, however the command line is written, while a member's
// credential passes.
func TestRefuseDelegate_Commands(t *testing.T) {
	parser, err := kong.New(&cli{}, kong.Name("docket"))
	if err != nil {
		t.Fatal(err)
	}
	root := parser.Model.Node
	leaves := map[string]bool{}
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		if len(n.Children) == 0 {
			leaves[strings.TrimPrefix(n.FullPath(), "docket ")] = true
		}
		for _, ch := range n.Children {
			walk(ch)
		}
	}
	walk(root)
	for command := range delegateCommands {
		if !leaves[command] {
			t.Errorf("delegateCommands names %q, which is no command", command)
		}
	}
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
	refused := func(t *testing.T, args []string) {
		t.Helper()
		err := refuseDelegate(delegate, root, args)
		if got := exitCode(err, &strings.Builder{}); got != exitDelegate {
			t.Errorf("a delegate's docket %s: exit %d (%v), want %d", strings.Join(args, " "), got, err, exitDelegate)
		}
		if err := refuseDelegate(member, root, args); err != nil {
			t.Errorf("a member's docket %s refused: %v", strings.Join(args, " "), err)
		}
	}
	for command := range leaves {
		if delegateCommands[command] {
			continue
		}
		t.Run(command, func(t *testing.T) {
			refused(t, append(strings.Fields(command), "--file", "missing.toml"))
		})
	}
	for _, args := range [][]string{
		{"events", "export", "--db", "docket.db"},
		{"events", "checkpoint"},
		{"events", "verify", "--data-dir", "/tmp/x"},
		{"events", "verify", "bundle.json"},
		{"events", "verify"},
		{"key", "rotate"},
		{"key", "public"},
		{"agent", "profile", "set", "calc", "--instructions", "/etc/passwd"},
		{"hook", "claude-code", "pre", "--config", "x.json"},
		{"help", "key", "rotate"},
		{"events", "--bogus", "export"}, // an unknown flag before the command is complete
		{"--", "key", "rotate"},
		{" dkt_dlg_x"}, // not a command, but read as none
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if args[0] == " dkt_dlg_x" {
				padded := &env{Getenv: func(k string) string {
					if k == "DOCKET_TOKEN" {
						return " dkt_dlg_x\n"
					}
					return ""
				}}
				if err := refuseDelegate(padded, root, []string{"key", "rotate"}); exitCode(err, &strings.Builder{}) != exitDelegate {
					t.Errorf("a delegate's credential with spaces around it: %v, want exit %d", err, exitDelegate)
				}
				return
			}
			refused(t, args)
		})
	}
	for _, api := range [][]string{{"agent", "list"}, {"ops", "--waiting"}, {"delegate", "create", "--life", "8h"}, {"operation", "list"},
		{"agent", "profile", "show", "calc"}, {"retry", "x.1", "--reason", "r"}, {"events", "tail", "-o", "json"}, {"--help"}, {"events"}} {
		if err := refuseDelegate(delegate, root, api); err != nil {
			t.Errorf("a delegate's docket %v refused: %v", api, err)
		}
	}
}
