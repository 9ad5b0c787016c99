package main

import (
	"fmt"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/docketrun/docket/internal/contract"
)

// delegateCommands are the only commands a delegate's credential may run
// (docs/delegates.md): each reaches the authority only over /api/v1, whose gate decides by
// the operation's class, and reads no file but the data dir's url file. Every other
// command starts a process, reads or writes the data dir (its keys, its store, its
// token), or reads a file the caller names, and is refused a delegate with exit 5 before
// anything is read. A new command is closed to delegates until it is listed here; a test
// checks that each name is a command.
var delegateCommands = map[string]bool{
	"agent create": true, "agent token": true, "agent list": true, "agent revoke": true,
	"agent level": true, "agent window": true, "agent autonomy": true,
	"agent profile show": true, "agent profile list": true,
	"agent blueprint show": true, "agent blueprint list": true, "agent blueprint remove": true,
	"task post": true, "task message": true, "task list": true, "task show": true,
	"connection create": true, "connection list": true, "connection revoke": true,
	"source bind": true, "source list": true, "tool lock": true, "tool list": true,
	"project create": true, "project list": true,
	"requests": true, "decide": true, "reconcile": true, "ops": true, "retry": true,
	"policy show": true, "policy list": true, "policy diff": true,
	"schedule create": true, "schedule list": true, "schedule show": true, "schedule pause": true,
	"schedule resume": true, "schedule run-now": true, "schedule delete": true,
	"budget set": true, "budget show": true, "budget list": true, "budget remove": true,
	"case list": true, "case show": true, "why": true, "events tail": true,
	"delegate create": true, "delegate list": true, "delegate revoke": true,
	"operation list": true, "confirm": true, "card list": true, "card show": true, "card decline": true,
	"version": true,
}

// isDelegateCredential reports whether the credential in the environment is a delegate's.
func isDelegateCredential(e *env) bool {
	return strings.HasPrefix(strings.TrimSpace(e.Getenv("DOCKET_TOKEN")), contract.PrefixDelegate)
}

// refuseDelegate refuses, with exit 5, the command args select when the credential in
// the environment is a delegate's and the command is not one of [delegateCommands]. It
// reads the command from args by the parser's own model, before the parser runs, because
// the parser checks the files some flags and arguments name; args it cannot read so (an
// unknown flag before the command is complete) are refused too.
func refuseDelegate(e *env, root *kong.Node, args []string) error {
	if !isDelegateCredential(e) {
		return nil
	}
	n, ok := commandOf(root, helpArgs(args))
	switch {
	case !ok:
		return &exitError{code: exitDelegate, err: fmt.Errorf("a delegate's credential runs only the commands that reach docket serve over its API, and this command line could not be read as one before parsing; unset DOCKET_TOKEN and run it as the member")}
	case len(n.Children) > 0:
		return nil // no command: the parser prints help or refuses the usage
	}
	return refuseDelegateCommand(e, n)
}

// refuseDelegateCommand refuses the selected command n to a delegate's credential unless
// it is one of [delegateCommands]. run calls it again on the command the parser selected.
func refuseDelegateCommand(e *env, n *kong.Node) error {
	if n == nil || !isDelegateCredential(e) {
		return nil
	}
	command := strings.TrimPrefix(n.FullPath(), "docket ")
	if delegateCommands[command] {
		return nil
	}
	return &exitError{code: exitDelegate, err: fmt.Errorf("docket %s acts on this machine (it starts a process, or reads the data dir or a file you name), and a delegate's credential may not; unset DOCKET_TOKEN and run it as the member", command)}
}

// commandOf returns the node of the command args select under root, read as the parser
// reads them: flags of the nodes reached so far are skipped with their values, and the
// first word that names a child descends into it. ok is false when a flag is unknown
// there or "--" comes before the command is complete.
func commandOf(root *kong.Node, args []string) (*kong.Node, bool) {
	n := root
	for i := 0; i < len(args) && len(n.Children) > 0; i++ {
		a := args[i]
		switch {
		case a == "--":
			return n, false
		case strings.HasPrefix(a, "-") && a != "-":
			f := flagOf(n, a)
			if f == nil {
				return n, false
			}
			if !f.IsBool() && !f.IsCounter() && !strings.Contains(a, "=") {
				i++ // its value
			}
		default:
			var next *kong.Node
			for _, c := range n.Children {
				if c.Name == a {
					next = c
				}
			}
			if next == nil {
				return n, true // not a command: the parser refuses it
			}
			n = next
		}
	}
	return n, true
}

// flagOf returns the flag arg names among those of n and its parents, or nil.
func flagOf(n *kong.Node, arg string) *kong.Flag {
	name, _, _ := strings.Cut(arg, "=")
	for ; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			switch {
			case name == "--"+f.Name, f.Negated && name == "--no-"+f.Name, f.Short != 0 && name == "-"+string(f.Short):
				return f
			}
			for _, al := range f.Aliases {
				if name == "--"+al {
					return f
				}
			}
		}
	}
	return nil
}
