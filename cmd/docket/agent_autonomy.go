package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// agentLevelCmd sets an Agent's autonomy level (docs/policies.md).
type agentLevelCmd struct {
	clientFlags
	Name        string `arg:"" help:"The Agent, by name or id."`
	Level       string `arg:"" enum:"manual,attended,unattended" help:"manual (a person makes every write), attended (writes only in a run window) or unattended."`
	Acknowledge string `help:"The autonomy policy's stated risk, read and acknowledged, when raising to unattended requires it."`
}

func (c *agentLevelCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var a contract.Autonomy
	if err := cl.do(ctx, http.MethodPut, projectPath(c.Project, "agents", c.Name, "level"), contract.SetLevelRequest{Level: c.Level, Acknowledgement: c.Acknowledge}, &a); err != nil {
		return err
	}
	return printAutonomy(e, c.clientFlags, c.Name, a)
}

// agentWindowCmd opens a run window in which an attended Agent's writes are admitted.
type agentWindowCmd struct {
	clientFlags
	Name    string `arg:"" help:"The Agent, by name or id."`
	Minutes int64  `help:"How long the window stays open, 1 to 1440 minutes." default:"60"`
}

func (c *agentWindowCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var a contract.Autonomy
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "agents", c.Name, "windows"), contract.OpenWindowRequest{Minutes: c.Minutes}, &a); err != nil {
		return err
	}
	return printAutonomy(e, c.clientFlags, c.Name, a)
}

// agentAutonomyCmd shows an Agent's level and open run windows.
type agentAutonomyCmd struct {
	clientFlags
	Name string `arg:"" help:"The Agent, by name or id."`
}

func (c *agentAutonomyCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var a contract.Autonomy
	if err := cl.do(ctx, http.MethodGet, projectPath(c.Project, "agents", c.Name, "autonomy"), nil, &a); err != nil {
		return err
	}
	return printAutonomy(e, c.clientFlags, c.Name, a)
}

func printAutonomy(e *env, f clientFlags, name string, a contract.Autonomy) error {
	if f.json() {
		return printJSON(e.Stdout, a)
	}
	if _, err := fmt.Fprintf(e.Stdout, "agent %s is %s (autonomy policy version %d)\n", name, a.Level, a.Policy); err != nil {
		return err
	}
	if a.Because != "" {
		if _, err := fmt.Fprintf(e.Stdout, "  because %s: %q\n", a.Because, a.Acknowledgement); err != nil {
			return err
		}
	}
	for _, w := range a.Windows {
		if _, err := fmt.Fprintf(e.Stdout, "  run window %s to %s, opened by %s\n", w.From.Format("2006-01-02T15:04:05Z"), w.Until.Format("2006-01-02T15:04:05Z"), w.OpenedBy); err != nil {
			return err
		}
	}
	return nil
}
