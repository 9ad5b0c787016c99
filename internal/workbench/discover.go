package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/toolset"
)

// ToolsAgent is the Agent through which docket start's tools page runs an MCP server's
// discovery as a governed read: an ApplyAction of the direct Action
// docket.mcp.discover@1 in an exploration Case, decided, dispatched, run by the worker
// and recorded like any Agent's call. It has no model and no runtime.
const ToolsAgent = "docket-start-tools"

// Bounds of one governed discovery.
const (
	discoverLockWait = 30 * time.Second // for the worker to advertise the discovery Tool, right after a start
	discoverRunWait  = 60 * time.Second // for the worker to run it
)

// governedDiscover runs docket.mcp.discover@1 against the mcp Source named source of the
// Connection local as a governed read: the Tool is locked (reads need no person), the
// ToolsAgent opens an exploration Case and applies it, the worker runs it, and each tool
// the server lists lands on the Board as an mcp_tool fact, read back here.
func (p *toolsPage) governedDiscover(ctx context.Context, base, source string) ([]toolset.Discovered, bool, error) {
	cl, err := p.rts.member()
	if err != nil {
		return nil, false, err
	}
	if err := p.readyToDiscover(ctx, cl, source); err != nil {
		return nil, false, err
	}
	token, err := p.toolsAgentToken(ctx, cl)
	if err != nil {
		return nil, false, err
	}
	gw, err := mcpclient.Dial(ctx, mcpclient.Config{URL: base + "/mcp", Token: token})
	if err != nil {
		return nil, false, fmt.Errorf("reach the gateway as %s: %w", ToolsAgent, err)
	}
	defer gw.Close()
	open, err := call(ctx, gw, contract.ToolOpenCase, contract.OpenCaseInput{CaseType: "exploration",
		BusinessKey: contract.Args{"topic": contract.StringValue("discover the tools of " + source + " at " + strconv.FormatInt(time.Now().UnixNano(), 10))}})
	if err != nil {
		return nil, false, err
	}
	var opened struct {
		Case contract.Case `json:"case"`
	}
	if err := json.Unmarshal(open.Result, &opened); err != nil || opened.Case.CaseID == "" {
		return nil, false, fmt.Errorf("read the exploration Case opened for the discovery: %v", err)
	}
	res, ordinal, err := callOrdinal(ctx, gw, contract.ToolApplyAction, contract.ApplyActionInput{CaseID: opened.Case.CaseID,
		Action: string(worker.MCPDiscoverTool), Params: contract.Args{"source": contract.StringValue(source)}})
	if err != nil {
		return nil, false, err
	}
	if len(res.Operations) == 0 || ordinal == 0 {
		return nil, false, fmt.Errorf("the discovery's ApplyAction became no Operation")
	}
	if err := p.waitDiscovery(ctx, cl, base, token, ordinal); err != nil {
		return nil, false, err
	}
	return p.discovered(ctx, cl, source)
}

// readyToDiscover waits until the worker of the Connection local holds source in its
// vault (it reloads the vault within seconds of a change, and says so on its next poll),
// and locks docket.mcp.discover@1 there at the digest it advertises, needing no person,
// unless it is locked at that digest already. Right after a start the worker may not
// have polled yet, so both are tried again within discoverLockWait.
func (p *toolsPage) readyToDiscover(ctx context.Context, cl *apiclient.Client, source string) error {
	deadline := time.Now().Add(discoverLockWait)
	for {
		inv, err := cl.ToolInventory(ctx, p.rts.project(), Connection)
		if err != nil {
			return err
		}
		held, locked := false, false
		for _, s := range inv.Sources {
			held = held || s.Name == source && s.InVault != nil && *s.InVault
		}
		for _, e := range inv.Tools {
			locked = locked || e.Tool == string(worker.MCPDiscoverTool) && e.Lock != nil && !e.Stale && e.Advertised != nil
		}
		if held && !locked {
			_, err = cl.LockTool(ctx, p.rts.project(), Connection, string(worker.MCPDiscoverTool), "", "none")
			if code := contract.CodeOf(err); err != nil && code != contract.CodeToolNotAdvertised && code != contract.CodeNoLiveWorker {
				return err
			}
			locked = err == nil
		}
		if held && locked {
			return nil
		}
		if time.Now().After(deadline) {
			return contract.Errorf(contract.CodeUnavailable, "the worker of %s did not take up the Source %s within %s; see its log (docket start printed where), then add the server again.", Connection, source, discoverLockWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// toolsAgentToken returns the token of the ToolsAgent, creating the Agent on first use
// and keeping its token beside the others in the data dir (mode 0600).
func (p *toolsPage) toolsAgentToken(ctx context.Context, cl *apiclient.Client) (string, error) {
	id, err := (&firstUse{rts: p.rts}).agent(ctx, cl, ToolsAgent)
	if err != nil {
		return "", err
	}
	return p.rts.agentToken(ctx, cl, contract.AgentProfile{Agent: id}, filepath.Join(p.rts.cfg.Dir, AgentsDir, string(id)))
}

// waitDiscovery waits until the ToolsAgent's Operation ordinal has an outcome, and
// refuses with its reason when it is not done.
func (p *toolsPage) waitDiscovery(ctx context.Context, cl *apiclient.Client, base, token string, ordinal int64) error {
	ag := &apiclient.Client{URL: base, Token: token}
	var waited contract.OperationsWaited
	if err := ag.Do(ctx, http.MethodPost, "/api/v1/operations/wait", contract.OperationsWait{
		Waiting: []contract.TaskWait{{CallID: "discover", Tool: contract.ToolApplyAction, Ordinal: ordinal}}, WaitMS: int(discoverRunWait / time.Millisecond)}, &waited); err != nil {
		return fmt.Errorf("wait for the discovery: %w", err)
	}
	ops, err := apiclient.All[contract.OperationInfo](ctx, cl, apiclient.ProjectPath(p.rts.project(), "operations"))
	if err != nil {
		return err
	}
	for _, op := range ops {
		if op.AgentName != ToolsAgent || op.Ordinal != ordinal {
			continue
		}
		switch op.State {
		case contract.OpDone:
			return nil
		case contract.OpRunning, contract.OpWaitingForDecision:
			return contract.Errorf(contract.CodeUnavailable, "the discovery (Operation %s) still %s after %s: %s; look at the console's Operations page, then discover again.", op.Work, op.State, discoverRunWait, op.Reason)
		default:
			return contract.Errorf(contract.CodeWorkerRefused, "the discovery (Operation %s) ended %s: %s", op.Work, op.State, op.Reason)
		}
	}
	return fmt.Errorf("the discovery's Operation %d of %s is not listed", ordinal, ToolsAgent)
}

// discovered reads the mcp_tool facts of source back from the Board.
func (p *toolsPage) discovered(ctx context.Context, cl *apiclient.Client, source string) ([]toolset.Discovered, bool, error) {
	q := url.Values{"predicate": {worker.MCPToolPredicate}, "arg": {"source=" + strconv.Quote(source)}, "limit": {"200"}}
	var facts contract.Bounded[contract.Node]
	if err := cl.Do(ctx, http.MethodGet, apiclient.ProjectPath(p.rts.project(), "facts")+"?"+q.Encode(), nil, &facts); err != nil {
		return nil, false, err
	}
	rows := make([]contract.Args, 0, len(facts.Items))
	for _, n := range facts.Items {
		if n.Atom == nil {
			continue
		}
		a := n.Atom.Args
		rows = append(rows, contract.Args{"name": a["name"], "description": a["description"], "inputSchema": a["input_schema"],
			"outputSchema": a["output_schema"], "readOnly": a["read_only"], "truncated": a["truncated"]})
	}
	return toolset.ParseDiscovered(rows)
}

// call sends one of the six tools and refuses when the gateway did not accept it.
func call(ctx context.Context, gw *mcpclient.Client, name string, in any) (contract.ToolResult, error) {
	res, _, err := callOrdinal(ctx, gw, name, in)
	return res, err
}

func callOrdinal(ctx context.Context, gw *mcpclient.Client, name string, in any) (contract.ToolResult, int64, error) {
	args, err := json.Marshal(in)
	if err != nil {
		return contract.ToolResult{}, 0, fmt.Errorf("encode %s: %w", name, err)
	}
	cr, err := gw.Call(ctx, name, args)
	if err != nil {
		return contract.ToolResult{}, 0, fmt.Errorf("%s for the discovery: %w", name, err)
	}
	var res contract.ToolResult
	if err := json.Unmarshal([]byte(cr.Text), &res); err != nil {
		return res, 0, fmt.Errorf("read the answer to %s: %w", name, err)
	}
	if !res.Accepted {
		return res, 0, &contract.Error{Code: res.ErrorCode, Teaching: res.Teaching, Err: errors.New(name + " for the discovery was refused")}
	}
	return res, cr.Ordinal, nil
}
