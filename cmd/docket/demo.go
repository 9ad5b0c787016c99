package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"time"

	verifiedcalculation "github.com/docketrun/docket/examples/verified-calculation"
	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
)

// demoCmd walks the verified calculation (DESIGN.md §9.4) through the Board: the Board
// derives, binds and certifies; the demo itself plays the scripted agent and executes the
// two workspace tools in a temporary directory. Serve, worker and a real model join this
// walk as those parts land (issues 4–7); until then it says so.
type demoCmd struct {
	Keep string `name:"keep" help:"Keep the workspace in DIR instead of a temporary directory." placeholder:"DIR"`
}

const demoAgent contract.Principal = "agent:demo"

func (c *demoCmd) Run(e *env) error {
	dir := c.Keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "docket-demo-")
		if err != nil {
			return fmt.Errorf("make workspace: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("make workspace: %w", err)
	}
	ws, err := newWorkspace(dir)
	if err != nil {
		return err
	}
	defer ws.root.Close()
	d := &demo{e: e, ws: ws}
	if err := d.walk(); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

type demo struct {
	e    *env
	ws   *workspace
	b    *board.Board
	pkg  *capability.Package
	step int
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.e.Stdout, format+"\n", args...) }

func (d *demo) stepf(format string, args ...any) {
	d.step++
	d.say("\n%d. "+format, append([]any{d.step}, args...)...)
}

func (d *demo) walk() error {
	capFS, err := fs.Sub(verifiedcalculation.Files, "capability")
	if err != nil {
		return err
	}
	if d.pkg, err = capability.LoadFS(capFS); err != nil {
		return fmt.Errorf("load the example capability: %w", err)
	}
	if d.b, err = board.New(d.pkg.Declarations); err != nil {
		return err
	}
	input, err := fs.ReadFile(verifiedcalculation.Files, "data/input.json")
	if err != nil {
		return err
	}
	if err := d.ws.root.MkdirAll("data", 0o700); err != nil {
		return err
	}
	if err := d.ws.root.WriteFile("data/input.json", input, 0o600); err != nil {
		return err
	}
	d.say("Docket demo: the verified calculation (DESIGN.md §9.4), on the Board alone.")
	d.say("The agent is scripted (no model inference). This build has the Board, the rule engine and")
	d.say("the capability format; the authority, worker and model runtime join this walk as they land.")
	d.say("capability %s  %s", d.pkg.Release, d.pkg.Release.Digest)
	d.say("workspace  %s", d.ws.dir)

	d.stepf("load_input: the agent asks to read data/input.json through the workspace tool.")
	if _, err := d.act("", "load_input", contract.Args{"path": contract.StringValue("data/input.json")}); err != nil {
		return err
	}
	res, ok := d.holds("calculation_result")
	if !ok {
		return errors.New("the rules derived no calculation_result")
	}
	d.say("   the Board derived %s (%s, %s)", atomText(res.Atom), res.Kind, res.Tier)

	d.stepf("OpenCase verified_calculation for job_id calc-001 (opens only on attested input).")
	key := contract.Args{"job_id": contract.StringValue("calc-001")}
	c, _, err := d.b.OpenCase(demoAgent, "verified_calculation", key, time.Now())
	if err != nil {
		return err
	}
	d.say("   case %s, root %s", c.CaseID, c.Root)
	if _, err := d.b.Certify(c.CaseID); err != nil {
		d.say("   not certified yet: %v", err)
	}

	d.stepf("write_result: the agent names the job and the file; the Board binds subtotal and total.")
	if _, err := d.act(c.CaseID, "write_result", contract.Args{"path": contract.StringValue("out/result.json"), "total": mustInt(1)}); err != nil {
		d.say("   passing total itself is refused: %v", err)
	}
	if _, err := d.act(c.CaseID, "write_result", contract.Args{"path": contract.StringValue("out/result.json")}); err != nil {
		return err
	}

	d.stepf("verify_result: an independent read of the written file; path is bound from the write.")
	if _, err := d.act(c.CaseID, "verify_result", contract.Args{}); err != nil {
		return err
	}

	d.stepf("CloseCase completed: only a root certified by a derived acceptance may complete.")
	acc, err := d.b.Certify(c.CaseID)
	if err != nil {
		return err
	}
	d.say("   certified by %s (%s, %s)", atomText(acc.Atom), acc.Kind, acc.Tier)
	closed, err := d.b.CloseCase(demoAgent, c.CaseID, contract.DispositionCompleted, "", time.Now())
	if err != nil {
		return err
	}
	receipt, err := json.MarshalIndent(closed.Receipt, "   ", "  ")
	if err != nil {
		return err
	}
	d.say("   receipt:\n   %s", receipt)

	out, err := d.ws.root.ReadFile("out/result.json")
	if err != nil {
		return err
	}
	d.say("\nout/result.json:\n%s", out)
	d.say("Case %s %s and certified.", closed.Case.CaseID, closed.Case.Disposition)
	return nil
}

// act applies an Action as the scripted agent and, when the Board asks for an execution,
// runs the workspace tool and applies its outcome as the tool, at the Source's tier.
func (d *demo) act(caseID contract.CaseID, name string, args contract.Args) (board.ActionResult, error) {
	r, err := d.b.ApplyAction(board.Author{Principal: demoAgent}, caseID, name, args)
	if err != nil || r.Request == nil {
		return r, err
	}
	req := *r.Request
	d.say("   execution request: %s %s %s", req.Tool, req.Kind, argsText(req.Args))
	if len(req.Bound) > 0 {
		d.say("   bound by the Board from trusted premises: %v", req.Bound)
	}
	if req.Approval == board.ApprovalPerson {
		d.say("   the capability asks a person to approve this write; decisions bound to the request digest")
		d.say("   arrive with the gateway, so this Board-only walk proceeds as the member running it")
	}
	out := d.ws.run(req)
	if !out.OK {
		return r, fmt.Errorf("%s: %s", req.Tool, out.Reason)
	}
	src := d.pkg.Declarations.Sources[0]
	tool := board.Author{Principal: contract.Principal("tool:" + req.Tool), Tier: src.Tier, Words: src.Words}
	return d.b.ApplyOutcome(tool, req, out)
}

func (d *demo) holds(pred string) (contract.Node, bool) {
	got, err := d.b.Query(contract.Atom{Predicate: pred, Args: contract.Args{}}, "", 1)
	if err != nil || len(got.Items) == 0 {
		return contract.Node{}, false
	}
	return got.Items[0], true
}

func atomText(a *contract.Atom) string {
	if a == nil {
		return "<none>"
	}
	return a.Predicate + argsText(a.Args)
}

func argsText(args contract.Args) string {
	b, _ := json.Marshal(args)
	return string(b)
}

func mustInt(i int64) contract.Value {
	v, err := contract.IntValue(i)
	if err != nil {
		panic(err)
	}
	return v
}

// workspace executes the two workspace tools the example needs, fenced to one directory
// by os.Root (no traversal, no absolute paths, no symlinks out).
type workspace struct {
	dir  string
	root *os.Root
}

func newWorkspace(dir string) (*workspace, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	return &workspace{dir: dir, root: root}, nil
}

func (w *workspace) run(req contract.ExecutionRequest) contract.ExecutionOutcome {
	p, ok := req.Args["path"]
	if !ok || p.Kind() != contract.ValueString {
		return contract.ExecutionOutcome{Reason: "the request names no path"}
	}
	switch req.Tool {
	case "docket.workspace.read_json@1":
		b, err := w.root.ReadFile(p.Str())
		if err != nil {
			return contract.ExecutionOutcome{Reason: err.Error()}
		}
		var row contract.Args
		if err := json.Unmarshal(b, &row); err != nil {
			return contract.ExecutionOutcome{Reason: "not a JSON object of scalars: " + err.Error()}
		}
		return contract.ExecutionOutcome{OK: true, Rows: []contract.Args{row}}
	case "docket.workspace.write_json@1":
		doc := contract.Args{}
		for k, v := range req.Args {
			if k != "path" {
				doc[k] = v
			}
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return contract.ExecutionOutcome{Reason: err.Error()}
		}
		if err := w.root.MkdirAll(path.Dir(p.Str()), 0o700); err != nil {
			return contract.ExecutionOutcome{Reason: err.Error()}
		}
		if err := w.root.WriteFile(p.Str(), append(b, '\n'), 0o600); err != nil {
			return contract.ExecutionOutcome{Reason: err.Error()}
		}
		return contract.ExecutionOutcome{OK: true}
	}
	return contract.ExecutionOutcome{Reason: "the demo has no tool " + req.Tool}
}
