package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/toolset"
)

type workerToolsCmd struct {
	Discover workerToolsDiscoverCmd `cmd:"" help:"List an mcp Source's tools through the worker's mcp adapter; with --add, add them to the manifest."`
}

// workerToolsDiscoverCmd runs docket.mcp.discover@1 here, as the worker would, and adds
// the tools named with --add as manifest entries.
type workerToolsDiscoverCmd struct {
	workerFiles
	Source string   `required:"" help:"The mcp Source in the vault (docket worker mcp add)."`
	Add    []string `help:"A discovered tool to add to the manifest (repeatable)."`
	Kind   string   `help:"The kind the added tools run as: read, write or run. A server's tool may act, so the default is write." enum:"read,write,run" default:"write"`
}

func (c *workerToolsDiscoverCmd) Help() string {
	return `Connects to the mcp Source's server through the mcp adapter the worker runs, lists its
tools (tools/list, at most 200) and prints each with the params its input schema maps to and
the returns its output schema offers; a tool that cannot be offered says why. --add TOOL
writes that tool's manifest entry (id <source>.<tool>@1, kind --kind); the worker reloads
its manifest and advertises it on its next poll, to be locked. Add read tools and write
tools in two runs, each with its --kind.

Examples:
  docket worker tools discover --source files
  docket worker tools discover --source files --add read_text_file --add list_directory --kind read
  docket worker tools discover --source files --add write_file`
}

func (c *workerToolsDiscoverCmd) Run(ctx context.Context, e *env) error {
	f, err := c.files(e)
	if err != nil {
		return err
	}
	found, truncated, err := f.Discover(ctx, c.Source)
	if err != nil {
		return err
	}
	if len(c.Add) == 0 {
		return printDiscovered(e.Stdout, found, truncated)
	}
	var picks []toolset.Pick
	for _, name := range c.Add {
		i := slices.IndexFunc(found, func(d toolset.Discovered) bool { return d.Name == name })
		if i < 0 {
			return &usageError{err: fmt.Errorf("--add %s: source %s lists no such tool; run without --add to see its tools", name, c.Source)}
		}
		picks = append(picks, toolset.Pick{Tool: found[i], Kind: c.Kind})
	}
	added, err := f.AddMCPTools(c.Source, picks)
	if err != nil {
		return err
	}
	m, err := worker.LoadManifest(f.Manifest, nil)
	if err != nil {
		return err
	}
	for _, id := range added.Tools {
		_, digest, _ := m.Lookup(id)
		if _, err := fmt.Fprintf(e.Stdout, "added %s (%s)\tlock: docket tool lock --connection CONNECTION --tool %s --digest %s\n", id, c.Kind, id, digest); err != nil {
			return err
		}
	}
	if len(added.Source.Words) > 0 {
		_, err = fmt.Fprintf(e.Stdout, "its rows attest %s once the Source is bound with them: docket source bind --connection CONNECTION --name %s --type mcp --words %s\n",
			strings.Join(added.Source.Words, ", "), c.Source, strings.Join(added.Source.Words, ","))
	}
	return err
}

// printDiscovered writes one line per discovered tool: its name, the server's read-only
// hint, the params it maps to (* required) or why it cannot be added, and its returns.
func printDiscovered(w io.Writer, found []toolset.Discovered, truncated bool) error {
	for _, d := range found {
		hint := "may act"
		if d.ReadOnly {
			hint = "read-only hint"
		}
		line := d.Name + "\t" + hint + "\t"
		_, m, err := toolset.MCPTool(d, "")
		if err != nil {
			line += "cannot be added: " + strings.TrimPrefix(err.Error(), string(contract.CodeOf(err))+": ")
		} else {
			var ps []string
			for name, p := range m.Params {
				star := ""
				if p.Required {
					star = "*"
				}
				ps = append(ps, name+star+" "+p.Type)
			}
			slices.Sort(ps)
			line += "params: " + strings.Join(ps, ", ")
			for _, s := range m.Skipped {
				line += fmt.Sprintf(" (leaves out %s: %s)", s.Name, s.Reason)
			}
			if r := toolset.ReturnsFromSchema(d.OutputSchema); len(r) > 0 {
				line += "\treturns: " + strings.Join(r, ", ")
			} else {
				line += "\tno structured output"
			}
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	if truncated {
		_, err := fmt.Fprintf(w, "the server lists more tools than the %d read; the list above is cut\n", 200)
		return err
	}
	return nil
}

// printTools writes one line per Tool the manifest holds, built-in ones included: its id,
// its digest (what docket tool lock needs), its adapter, its kind, and whether this
// worker offers it under the ceiling, or how to raise the ceiling so it does.
func printTools(w io.Writer, m *worker.Manifest, adapters map[string]worker.Adapter, ceiling worker.WorkspaceAccess) error {
	for _, id := range m.IDs() {
		t, digest, _ := m.Lookup(id)
		if _, ok := adapters[t.Adapter]; !ok {
			continue
		}
		status := "offered"
		if !ceiling.Offers(t) {
			raise := worker.WorkspaceRead
			if t.Kind != contract.ToolKindRead {
				raise = worker.WorkspaceReadWrite
			}
			status = fmt.Sprintf("above the ceiling --workspace-tools %s: run the worker with --workspace-tools %s to offer it", ceiling, raise)
		}
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", id, digest, t.Adapter, t.Kind, status); err != nil {
			return err
		}
	}
	return nil
}
