package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/docketrun/docket/internal/worker/toolset"
)

// workerFiles are the manifest and vault flags of the verbs that edit a worker's files.
type workerFiles struct {
	Manifest string `help:"The worker's tool manifest (default: $DOCKET_HOME/tools.json, as docket start runs it)." type:"path"`
	Vault    string `help:"The worker's Source vault, mode 0600 (default: $DOCKET_HOME/vault.json)." type:"path"`
}

// files returns the toolset files, the data dir's when no flag names them.
func (w workerFiles) files(e *env) (toolset.Files, error) {
	f := toolset.Files{Manifest: w.Manifest, Vault: w.Vault}
	if f.Manifest == "" || f.Vault == "" {
		dir, err := dataDir(e)
		if err != nil {
			return f, err
		}
		if f.Manifest == "" {
			f.Manifest = filepath.Join(dir, "tools.json")
		}
		if f.Vault == "" {
			f.Vault = filepath.Join(dir, "vault.json")
		}
	}
	return f, nil
}

type workerMCPCmd struct {
	Add workerMCPAddCmd `cmd:"" help:"Add an MCP server (a stdio command or a Streamable HTTP URL) to the vault as an mcp Source."`
}

// workerMCPAddCmd adds an MCP server to the worker's vault. Secret values (--env, and
// --header given without a value) are read from the environment or prompted, never from
// the command line, and are written into the vault only.
type workerMCPAddCmd struct {
	workerFiles
	Name    string   `arg:"" help:"The Source's name, as it will be bound (docket source bind --name)."`
	Command []string `arg:"" optional:"" help:"After --: the stdio server's program and arguments."`
	URL     string   `help:"The Streamable HTTP endpoint of the server, instead of a command."`
	Env     []string `help:"An environment variable the stdio server gets; its value is read from this environment, else prompted (repeatable)."`
	Header  []string `help:"A header the HTTP server gets: NAME (value read from the environment variable NAME, else prompted) or NAME:VALUE (repeatable)."`
}

func (c *workerMCPAddCmd) Help() string {
	return `Writes an MCP server into the worker's vault as an mcp Source; adds no Tool. Then bind
the Source, lock docket.mcp.discover@1, and list the server's tools with docket worker tools
discover. Secret values go into the vault (0600) only: --env NAME and --header NAME read the
value from the environment variable NAME, or prompt for it.

Examples:
  docket worker mcp add files -- npx -y @modelcontextprotocol/server-filesystem /srv/docs
  GITHUB_TOKEN=… docket worker mcp add github --env GITHUB_TOKEN -- github-mcp-server stdio
  docket worker mcp add tracker --url https://mcp.example.com/mcp --header Authorization`
}

func (c *workerMCPAddCmd) Run(ctx context.Context, e *env) error {
	f, err := c.files(e)
	if err != nil {
		return err
	}
	s := toolset.MCPServer{Name: c.Name, Command: c.Command, URL: c.URL}
	if len(c.Env) > 0 {
		s.Env = map[string]string{}
		for _, k := range c.Env {
			if s.Env[k], err = readPassphrase(ctx, e, "", k, k); err != nil {
				return err
			}
		}
	}
	if len(c.Header) > 0 {
		s.Headers = map[string]string{}
		for _, h := range c.Header {
			k, v, ok := strings.Cut(h, ":")
			if !ok {
				if v, err = readPassphrase(ctx, e, "", k, k); err != nil {
					return err
				}
			}
			s.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	added, err := f.AddMCPServer(s)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.Stdout, `added mcp Source %s to %s
next:
  docket source bind --connection CONNECTION --name %s --type mcp --words %s
  docket tool lock --connection CONNECTION --tool %s --digest …   (digest: docket worker --manifest %s --print-tools)
  docket worker tools discover --source %s --manifest %s --vault %s
`, c.Name, f.Vault, c.Name, strings.Join(added.Source.Words, ","), added.Tools[0], f.Manifest, c.Name, f.Manifest, f.Vault)
	return err
}
