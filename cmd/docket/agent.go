package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// agentCmd manages Agents and their tokens.
type agentCmd struct {
	Create    agentCreateCmd    `cmd:"" help:"Create an Agent and print its token once."`
	Token     agentTokenCmd     `cmd:"" help:"Replace an Agent's token and print the new one once."`
	List      agentListCmd      `cmd:"" help:"List the project's Agents."`
	Revoke    agentRevokeCmd    `cmd:"" help:"Revoke an Agent; its token stops working."`
	Level     agentLevelCmd     `cmd:"" help:"Set an Agent's autonomy level: manual, attended or unattended."`
	Window    agentWindowCmd    `cmd:"" help:"Open a run window in which an attended Agent's writes are admitted."`
	Autonomy  agentAutonomyCmd  `cmd:"" help:"Show an Agent's autonomy level and open run windows."`
	Profile   agentProfileCmd   `cmd:"" help:"Set and show Agents' profiles: the model, budgets and instructions docket start runs them with."`
	Blueprint agentBlueprintCmd `cmd:"" help:"Set and show blueprints: named templates of Agent profiles, with the Case Types and Actions their Agents may use."`
	Run       agentRunCmd       `cmd:"" help:"Run the agent on one task to completion over the MCP gateway."`
	Chat      agentChatCmd      `cmd:"" help:"Talk with the agent on stdin, one line a message."`
	Serve     agentServeCmd     `cmd:"" help:"Take the Agent's tasks and wakes from the authority by long-poll; also POST /task on loopback with a per-run key."`
}

type agentCreateCmd struct {
	clientFlags
	Name string `arg:"" help:"Agent name, unique in the project."`
	Kind string `help:"agent (does work) or orchestrator (may also decide delegated requests)." enum:"agent,orchestrator" default:"agent"`
}

func (c *agentCreateCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var at contract.AgentToken
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "agents"), contract.CreateAgentRequest{Name: c.Name, Kind: c.Kind}, &at); err != nil {
		return err
	}
	return printAgentToken(e, c.clientFlags, at)
}

func printAgentToken(e *env, f clientFlags, at contract.AgentToken) error {
	if f.json() {
		return printJSON(e.Stdout, at)
	}
	_, err := fmt.Fprintf(e.Stdout, "agent %s (%s, %s) in project %s\ntoken (shown once; give it to the agent runtime as DOCKET_AGENT_TOKEN):\n%s\n",
		at.Agent.Name, at.Agent.ID, at.Agent.Kind, at.Agent.Project, at.Token)
	return err
}

type agentTokenCmd struct {
	clientFlags
	Name string `arg:"" help:"Agent name or id."`
}

func (c *agentTokenCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var at contract.AgentToken
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "agents", c.Name, "token"), nil, &at); err != nil {
		return err
	}
	return printAgentToken(e, c.clientFlags, at)
}

type agentListCmd struct {
	clientFlags
}

func (c *agentListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	items, err := list[contract.Agent](ctx, cl, projectPath(c.Project, "agents"))
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, items)
	}
	rows := make([][]string, 0, len(items))
	for _, a := range items {
		state := "live"
		if a.RevokedAt != nil {
			state = "revoked"
		}
		rows = append(rows, []string{string(a.ID), a.Name, string(a.Kind), state})
	}
	return writeList(e, []string{"id", "name", "kind", "state"}, rows,
		"no Agents in project "+c.Project+"; create one with docket agent create NAME")
}

type agentRevokeCmd struct {
	clientFlags
	Name string `arg:"" help:"Agent name or id."`
}

func (c *agentRevokeCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var a contract.Agent
	if err := cl.do(ctx, http.MethodDelete, projectPath(c.Project, "agents", c.Name), nil, &a); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, a)
	}
	_, err = fmt.Fprintf(e.Stdout, "agent %s revoked\n", a.Name)
	return err
}
