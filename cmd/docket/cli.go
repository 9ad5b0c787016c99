package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/alecthomas/kong"
)

// env is what a command may touch of the process: its streams and its environment.
// Commands write only here, never to os.Stdout, so tests can capture them.
type env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// cli is the command tree, in the order --help lists it: first run, processes, setup,
// decisions and records, then tools. Each subcommand is a type in its own file whose fields are its
// flags and whose Run method does the work.
type cli struct {
	Demo  demoCmd  `cmd:"" help:"Run the verified-calculation example end to end: serve, worker and agent."`
	Start startCmd `cmd:"" help:"Run serve, a worker and one runtime per enabled Agent profile as supervised children until Ctrl-C."`
	Stop  stopCmd  `cmd:"" help:"Stop the docket start running on this data dir."`
	Open  openCmd  `cmd:"" help:"Print the URL of the docket start running on this data dir again, and open it in a browser."`

	Init    initCmd    `cmd:"" help:"Create a data dir: installation key, store, first member, default project."`
	Serve   serveCmd   `cmd:"" help:"Run the authority and its console API on loopback."`
	Worker  workerCmd  `cmd:"" help:"Run a worker for one Connection: poll the authority, run locked Tools, report."`
	Doctor  doctorCmd  `cmd:"" help:"Check the data dir, the server and the credential."`
	Login   loginCmd   `cmd:"" help:"Log in as a member and save the session token for the admin verbs."`
	Logout  logoutCmd  `cmd:"" help:"End the saved session on the server and remove its token file."`
	Cert    certCmd    `cmd:"" help:"Make a small local CA and a server certificate for serve beyond loopback."`
	Backup  backupCmd  `cmd:"" help:"Copy the SQLite store while serve runs (PostgreSQL: pg_dump)."`
	Restore restoreCmd `cmd:"" help:"Make a data dir's store from a backup and verify it."`

	Agent      agentCmd      `cmd:"" help:"Manage Agents and their tokens."`
	Task       taskCmd       `cmd:"" help:"Post tasks and messages for Agents, and read how their runs went."`
	Connection connectionCmd `cmd:"" help:"Manage Connections (worker credentials)."`
	Source     sourceCmd     `cmd:"" help:"Bind Sources to Connections."`
	Tool       toolCmd       `cmd:"" help:"Lock Tools on Connections."`
	Capability capabilityCmd `cmd:"" help:"Validate capability packages."`
	Member     memberCmd     `cmd:"" help:"Manage members."`
	Project    projectCmd    `cmd:"" help:"Manage projects."`

	Requests  requestsCmd  `cmd:"" help:"List calls waiting for a decision, with their canonical vector and digest."`
	Decide    decideCmd    `cmd:"" help:"Approve or deny a request, naming the digest you read."`
	Reconcile reconcileCmd `cmd:"" help:"Settle an Operation that needs a person: done, failed or unknown."`
	Ops       opsCmd       `cmd:"" help:"List Operations: what is running or waiting, and why."`
	Retry     retryCmd     `cmd:"" help:"Run a failed Operation again as a new one (a member's recovery act)."`
	Policy    policyCmd    `cmd:"" help:"Publish and read the project's versioned policies."`
	Schedule  scheduleCmd  `cmd:"" help:"Make, pause, resume, run and delete schedules that post tasks for Agents."`
	Budget    budgetCmd    `cmd:"" help:"Set and read budgets on Agents' model requests: per project, Agent or schedule, per day, month or in total."`
	Notice    noticeCmd    `cmd:"" help:"Subscribe to notices of what needs you, by webhook or e-mail."`
	Case      caseCmd      `cmd:"" help:"Read Cases: receipt, acceptance, facts and their derivation."`
	Material  materialCmd  `cmd:"" help:"Hand an Agent files: add them, list them, set whether their content may go to its model."`
	Why       whyCmd       `cmd:"" help:"Print why a Board node holds: its derivation tree down to asserted and attested facts."`
	Events    eventsCmd    `cmd:"" help:"Read, verify, sign and export the event log."`
	Key       keyCmd       `cmd:"" help:"Print or rotate the installation's signing keys."`

	Delegate  delegateCmd  `cmd:"" help:"Make, list and revoke delegates: credentials that act for you in one project."`
	Operation operationCmd `cmd:"" help:"List every changing operation with its class: what a delegate may do."`
	Confirm   confirmCmd   `cmd:"" help:"Confirm a delegate's card: its call runs once, as you."`
	Card      cardCmd      `cmd:"" help:"List, show and decline delegates' cards."`
	Hook      hookCmd      `cmd:"" help:"Govern a coding agent's tool calls (Claude Code) through its hook."`

	Rules   rulesCmd   `cmd:"" help:"Check and evaluate Board rule files."`
	Version versionCmd `cmd:"" help:"Print the version."`

	VersionFlag kong.VersionFlag `name:"version" help:"Print the version and exit."`
}

// hookRunCLI is the command tree of the hook's own command lines, docket hook
// claude-code pre|post: the same command types, flags and help as in cli, and nothing
// else. A coding agent runs these twice on every tool call, and building the whole tree
// (every command's tags parsed, every help interpolated) was most of the hook's start
// (docs/coding-agents.md, "Speed").
type hookRunCLI struct {
	Hook struct {
		ClaudeCode hookClaudeCodeCmd `cmd:"" name:"claude-code" help:"What Claude Code runs: the pre- and post-tool hooks."`
	} `cmd:"" help:"Govern a coding agent's tool calls (Claude Code) through its hook."`

	VersionFlag kong.VersionFlag `name:"version" help:"Print the version and exit."`
}

// commandTree is the command tree run parses args with: hookRunCLI for the hook's command
// lines, which name their command first, and cli for every other.
func commandTree(args []string) any {
	if len(args) >= 3 && args[0] == "hook" && args[1] == "claude-code" && (args[2] == "pre" || args[2] == "post") {
		return &hookRunCLI{}
	}
	return &cli{}
}

// exitRequest carries kong's request to exit (after --help, for example) out of Parse
// without ending the process, so that run stays callable from tests.
type exitRequest int

// run parses args and runs the selected command.
func run(ctx context.Context, args []string, e *env) error {
	return runTree(ctx, commandTree(args), args, e)
}

// runTree parses args with the command tree tree and runs the selected command.
func runTree(ctx context.Context, tree any, args []string, e *env) (err error) {
	parser, err := kong.New(tree,
		kong.Name("docket"),
		kong.Description("Docket runs AI agents on real systems without giving them authority."),
		kong.Writers(e.Stdout, e.Stderr),
		kong.Exit(func(code int) { panic(exitRequest(code)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Help(helpPrinter),
		kong.Vars{"version": "docket " + versionLine()},
		kong.BindTo(ctx, (*context.Context)(nil)),
		kong.Bind(e),
	)
	if err != nil {
		return fmt.Errorf("build command line: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			code, ok := r.(exitRequest)
			if !ok {
				panic(r)
			}
			if code != 0 {
				err = &exitError{code: int(code)}
			} else {
				err = nil
			}
		}
	}()
	// Before parsing: the parser itself checks the files some flags name.
	if err := refuseDelegate(e, parser.Model.Node, args); err != nil {
		return err
	}
	kctx, err := parser.Parse(helpArgs(args))
	if err != nil {
		return &usageError{err: err, help: usageHelp(err)}
	}
	// Again on the command the parser selected, which is the one that runs.
	if err := refuseDelegateCommand(e, kctx.Selected()); err != nil {
		return err
	}
	return kctx.Run()
}

// Exit codes.
const (
	exitOK         = 0
	exitFailure    = 1
	exitUsage      = 2
	exitCredential = 3
	exitReplaced   = 4
	exitDelegate   = 5 // a delegate's credential on a command that acts on the machine
	exitPending    = 6 // docket agent run: the task's work is still pending (a decision, a running write)
	exitUntrusted  = 7 // docket events verify BUNDLE: it holds only under the keys it carries, which no one trusts
)

// usageError is a command line that does not parse: exit 2. help is the command whose
// --help teaches the fix ("docket agent create"); empty means docket's own.
type usageError struct {
	err  error
	help string
}

// usageHelp names the command whose help a parse error should point at: the deepest
// command the parser reached.
func usageHelp(err error) string {
	pe, ok := errors.AsType[*kong.ParseError](err)
	if !ok || pe.Context == nil || pe.Context.Selected() == nil {
		return ""
	}
	return pe.Context.Selected().FullPath()
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// exitError ends the process with a given code and, when err is set, a message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// exitCode is the one place that maps an error to the process's exit status, printing it
// to w unless it was already reported.
func exitCode(err error, w io.Writer) int {
	if err == nil {
		return exitOK
	}
	if ue, ok := errors.AsType[*usageError](err); ok {
		help := cmp.Or(ue.help, "docket")
		fmt.Fprintf(w, "docket: %v\nRun '%s --help' for usage and examples.\n", ue.err, help)
		return exitUsage
	}
	if ee, ok := errors.AsType[*exitError](err); ok {
		if ee.err != nil {
			fmt.Fprintf(w, "docket: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(w, "docket: %v\n", err)
	return exitFailure
}
