package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/workbench"
)

type materialCmd struct {
	Add      materialAddCmd      `cmd:"" help:"Add files to an Agent's conversation: the bytes stay on this machine, serve records their metadata."`
	List     materialListCmd     `cmd:"" help:"List materials: who added them, their disclosure, and which Operations read them."`
	Disclose materialDiscloseCmd `cmd:"" help:"Allow or forbid sending a material's content to an Agent's model provider."`
}

type materialAddCmd struct {
	clientFlags
	Agent        string   `arg:"" help:"The Agent the files are for (name or id)."`
	Files        []string `arg:"" name:"file" help:"Files to add (at most 20)."`
	Conversation string   `help:"The conversation the files are added to; empty: the Agent's."`
}

func (c *materialAddCmd) Help() string {
	return `Sends the files to the docket start running on this data dir, through its run-key gate: their
bytes go into the material area (<data dir>/materials, mode 0600), never into serve's store,
events or logs, and serve records each file's name, size, media type and sha256, as asserted
by you. The Agent reads a material only through a material read Action (docket.material.read@1),
which a person approves; its text reaches the Agent's model only once docket material disclose
allows it. The first add sets that read up on docket start's worker (docs/materials.md). A PDF
is read page by page as text.

Examples:
  docket material add calc invoice.txt notes.md
  docket material add calc report.txt --conversation c1 -o json`
}

func (c *materialAddCmd) Run(ctx context.Context, e *env) error {
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	ms, err := workbench.AddMaterials(ctx, dir, c.Agent, c.Conversation, c.Files)
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, ms)
	}
	var sb strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&sb, "added %s %s (%d bytes, %s) for %s; its content is not disclosed: docket material disclose %s %s --allow\n",
			m.Name, m.SHA256, m.Size, m.MediaType, m.AgentName, m.AgentName, m.SHA256)
	}
	_, err = fmt.Fprint(e.Stdout, sb.String())
	return err
}

type materialListCmd struct {
	clientFlags
	Agent string `arg:"" optional:"" help:"Only this Agent's materials (name or id)."`
}

func (c *materialListCmd) Help() string {
	return `Lists materials, newest first: the Agent, the file's name, size, media type and sha256, who
added it, whether its content may go to the Agent's model provider, and the Operations that read it
with who approved each read.

Examples:
  docket material list
  docket material list calc -o json`
}

func (c *materialListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	path := projectPath(c.Project, "materials")
	if c.Agent != "" {
		path = projectPath(c.Project, "agents", c.Agent, "materials")
	}
	var page contract.Page[contract.Material]
	if err := cl.do(ctx, http.MethodGet, path, nil, &page); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, page.Items)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "agent\tname\tsize\ttype\tsha256\tadded by\tdisclosed\tread by")
	for _, m := range page.Items {
		reads := []string{}
		for _, r := range m.Reads {
			by := "needing no approval"
			if r.ApprovedBy != "" {
				by = "approved by " + string(r.ApprovedBy)
			}
			reads = append(reads, fmt.Sprintf("operation %d at %s, %s", r.Ordinal, r.At.Format(time.RFC3339), by))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", m.AgentName, m.Name, m.Size, m.MediaType, m.SHA256, m.AddedBy,
			yesNo(m.Disclosed), strings.Join(reads, ", "))
	}
	return tw.Flush()
}

type materialDiscloseCmd struct {
	clientFlags
	Agent    string `arg:"" help:"The Agent (name or id)."`
	Material string `arg:"" help:"The material's sha256, as docket material list shows it."`
	Allow    bool   `xor:"disclose" required:"" help:"Allow sending its content to the Agent's model provider."`
	Forbid   bool   `xor:"disclose" required:"" help:"Forbid it again; the next model request carries a placeholder instead."`
}

func (c *materialDiscloseCmd) Help() string {
	return `Sets a material's disclosure for one Agent: whether the text its read Action returned may be
sent to that Agent's model provider. The runtime asks before every model request, so a change
takes effect at the next one. Without it the model is shown a placeholder naming this command.

Examples:
  docket material disclose calc sha256:20b6…13b2e --allow
  docket material disclose calc sha256:20b6…13b2e --forbid`
}

func (c *materialDiscloseCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var m contract.Material
	if err := cl.do(ctx, http.MethodPut, projectPath(c.Project, "agents", c.Agent, "materials", c.Material, "disclosure"),
		contract.MaterialDisclosure{Allowed: c.Allow}, &m); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, m)
	}
	verb := "may not"
	if m.Disclosed {
		verb = "may"
	}
	_, err = fmt.Fprintf(e.Stdout, "material %s (%s) %s be sent to %s's model provider\n", m.Name, m.SHA256, verb, m.AgentName)
	return err
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (c *materialCmd) Help() string {
	return `Materials are files a person hands an Agent (docs/materials.md). Their bytes stay in the
material area on the machine docket start runs on; serve learns only each file's name, size,
media type and sha256. Reading one takes the material read Action, approved like any other, and
its text reaches the Agent's model only when its disclosure is allowed.

Examples:
  docket material add calc invoice.txt
  docket material list calc
  docket material disclose calc sha256:20b6…13b2e --allow`
}
