package toolset_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/slowtest"
	"github.com/docketrun/docket/internal/worker"
	mcpadapter "github.com/docketrun/docket/internal/worker/adapters/mcp"
	"github.com/docketrun/docket/internal/worker/toolset"
)

// serverEnv, when set in a re-executed test binary, makes it an MCP server over stdio.
const serverEnv = "TOOLSET_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		if err := newServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if spec := os.Getenv(adderEnv); spec != "" {
		addMany(spec)
		os.Exit(0)
	}
	slowtest.Main(m) // the MCP tests start servers and processes: skipped under -short
}

type readIn struct {
	Path string `json:"path" jsonschema:"the file to read"`
}

type readOut struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type editIn struct {
	Path  string   `json:"path"`
	Edits []string `json:"edits"`
}

// newServer is a small MCP server of the official SDK: a read with structured output,
// a write without, and a tool whose required array maps to no param.
func newServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "files", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "read_file", Description: "reads a file", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in readIn) (*sdk.CallToolResult, readOut, error) {
			return nil, readOut{Path: in.Path, Content: "hello from " + in.Path}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "write_file", Description: "writes a file"},
		func(_ context.Context, _ *sdk.CallToolRequest, in readIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "wrote " + in.Path}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "edit_file", Description: "edits"},
		func(_ context.Context, _ *sdk.CallToolRequest, in editIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	return s
}

// httpServer serves newServer over Streamable HTTP, answering only with the token.
func httpServer(t *testing.T, token string) string {
	t.Helper()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return newServer() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func files(t *testing.T) toolset.Files {
	dir := t.TempDir()
	return toolset.Files{Manifest: filepath.Join(dir, "tools.json"), Vault: filepath.Join(dir, "vault.json")}
}

// TestMCP_addDiscoverPick: a server added over either transport is discovered through the
// mcp adapter, its picked tools become manifest entries the worker loads and runs, and its
// secrets are in the vault (0600) alone.
func TestMCP_addDiscoverPick(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cret-token-value"
	servers := map[string]toolset.MCPServer{
		"stdio": {Name: "files", Command: []string{exe, "-test.run=^$"}, Env: map[string]string{serverEnv: "1", "FILES_TOKEN": secret}},
		"http":  {Name: "files", URL: httpServer(t, secret), Headers: map[string]string{"Authorization": "Bearer " + secret}},
	}
	for transport, s := range servers {
		t.Run(transport, func(t *testing.T) {
			f := files(t)
			added, err := f.AddMCPServer(s)
			if err != nil {
				t.Fatal(err)
			}
			if added.Source == nil || added.Source.Name != "files" || added.Source.Type != "mcp" || len(added.Tools) != 1 || added.Tools[0] != worker.MCPDiscoverTool {
				t.Errorf("AddMCPServer = %+v, want the mcp Source files and the discovery Tool to lock", added)
			}
			if fi, err := os.Stat(f.Vault); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("vault %v, %v; want mode 0600", fi, err)
			}
			if _, err := os.Stat(f.Manifest); err == nil {
				t.Error("adding a server wrote the manifest; it adds no Tool")
			}
			found, truncated, err := f.Discover(context.Background(), "files")
			if err != nil || truncated {
				t.Fatalf("Discover = %v, %v, %v", found, truncated, err)
			}
			byName := map[string]toolset.Discovered{}
			for _, d := range found {
				byName[d.Name] = d
			}
			if len(found) != 3 || !byName["read_file"].Structured() || byName["write_file"].Structured() || !byName["read_file"].ReadOnly {
				t.Fatalf("discovered %+v; want read_file structured and read-only, write_file not structured", found)
			}
			if _, err := f.AddMCPTools("files", []toolset.Pick{{Tool: byName["edit_file"]}}); contract.CodeOf(err) != contract.CodeToolSchema || !strings.Contains(err.Error(), "edits") {
				t.Errorf("adding edit_file = %v, want tool_schema naming edits", err)
			}
			added, err = f.AddMCPTools("files", []toolset.Pick{{Tool: byName["read_file"], Kind: contract.ToolKindRead}, {Tool: byName["write_file"]}})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(ids(added.Tools), " ") != "files.read_file@1 files.write_file@1" || strings.Join(added.Source.Words, " ") != "content path" {
				t.Errorf("AddMCPTools = %+v", added)
			}
			mb, err := os.ReadFile(f.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			vb, err := os.ReadFile(f.Vault)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(mb), secret) || !strings.Contains(string(vb), secret) {
				t.Errorf("the secret is in the manifest, or missing from the vault:\n%s", mb)
			}
			m, err := worker.ParseManifest(mb, nil)
			if err != nil {
				t.Fatal(err)
			}
			read, _, _ := m.Lookup("files.read_file@1")
			write, _, _ := m.Lookup("files.write_file@1")
			if read.Kind != contract.ToolKindRead || write.Kind != contract.ToolKindWrite || !read.Params["path"].Required {
				t.Errorf("read %+v, write %+v", read, write)
			}
			// The added Tool runs as the worker runs it.
			v, err := worker.LoadVault(f.Vault)
			if err != nil {
				t.Fatal(err)
			}
			src, _ := v.Source("files")
			a := &mcpadapter.Adapter{}
			t.Cleanup(func() { a.Close() })
			out, err := a.Execute(context.Background(), worker.Call{Tool: "files.read_file@1", Def: read, Source: src, Args: contract.Args{"path": contract.StringValue("a.txt")}})
			if err != nil || len(out.Rows) != 1 || out.Rows[0]["content"].Str() != "hello from a.txt" {
				t.Errorf("running the added Tool = %+v, %v", out, err)
			}
			// Again: the Tools are there, so they are refused rather than replaced.
			if _, err := f.AddMCPTools("files", []toolset.Pick{{Tool: byName["read_file"]}}); contract.CodeOf(err) != contract.CodeToolExists || !strings.Contains(err.Error(), "files.read_file@2") {
				t.Errorf("adding it again = %v, want tool_exists suggesting @2", err)
			}
			if _, err := f.AddMCPServer(s); contract.CodeOf(err) != contract.CodeSourceExists {
				t.Errorf("adding the server again = %v, want source_exists", err)
			}
		})
	}
}

func ids(in []contract.ToolID) []string {
	out := make([]string, len(in))
	for i, id := range in {
		out[i] = string(id)
	}
	return out
}

// TestAddMCPServer_refused: each bad input names its field and quotes no secret, and
// leaves the files as they were.
func TestAddMCPServer_refused(t *testing.T) {
	const secret = "hunter2-secret"
	tests := []struct {
		name  string
		s     toolset.MCPServer
		field string
	}{
		{"no name", toolset.MCPServer{Command: []string{"srv"}}, "name"},
		{"bad name", toolset.MCPServer{Name: "Files!", Command: []string{"srv"}}, "name"},
		{"neither", toolset.MCPServer{Name: "x"}, "command"},
		{"both", toolset.MCPServer{Name: "x", Command: []string{"srv"}, URL: "https://h/mcp"}, "command"},
		{"empty program", toolset.MCPServer{Name: "x", Command: []string{" "}}, "command"},
		{"bad env name", toolset.MCPServer{Name: "x", Command: []string{"srv"}, Env: map[string]string{"1X": secret}}, "env"},
		{"headers on stdio", toolset.MCPServer{Name: "x", Command: []string{"srv"}, Headers: map[string]string{"A": secret}}, "headers"},
		{"bad url", toolset.MCPServer{Name: "x", URL: "ftp://" + secret + "@h/"}, "url"},
		{"env on url", toolset.MCPServer{Name: "x", URL: "https://h/mcp", Env: map[string]string{"A": secret}}, "env"},
		{"bad header", toolset.MCPServer{Name: "x", URL: "https://h/mcp", Headers: map[string]string{"Bad Header": secret}}, "headers"},
		{"header line break", toolset.MCPServer{Name: "x", URL: "https://h/mcp", Headers: map[string]string{"A": secret + "\r\nX: y"}}, "headers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := files(t)
			_, err := f.AddMCPServer(tt.s)
			if contract.CodeOf(err) != contract.CodeTemplateField || !strings.HasPrefix(strings.TrimPrefix(err.Error(), "template_field: "), tt.field+":") {
				t.Fatalf("AddMCPServer = %v, want template_field naming %s", err, tt.field)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the refusal quotes the secret: %v", err)
			}
			if _, err := os.Stat(f.Vault); err == nil {
				t.Error("a refused add wrote the vault")
			}
		})
	}
}

// TestApply_badFiles: an add to a manifest the worker would refuse, or to a vault others
// may read, is refused and changes neither file.
func TestApply_badFiles(t *testing.T) {
	f := files(t)
	if err := os.WriteFile(f.Manifest, []byte(`{"format":"docket-worker-tools/1","tools":{"a.b@1":{"adaptor":"run"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := f.AddMCPTools("x", []toolset.Pick{{Tool: toolset.Discovered{Name: "t"}}})
	if err == nil {
		t.Fatal("AddMCPTools to a missing vault succeeded")
	}
	if err := os.WriteFile(f.Vault, []byte(`{"sources":{"x":{"type":"mcp","command":["srv"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = f.AddMCPTools("x", []toolset.Pick{{Tool: toolset.Discovered{Name: "t"}}})
	if contract.CodeOf(err) != contract.CodeManifestInvalid || !strings.Contains(err.Error(), "fix "+f.Manifest) {
		t.Errorf("adding to a bad manifest = %v, want manifest_invalid naming the file", err)
	}
	if err := os.Chmod(f.Vault, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddMCPServer(toolset.MCPServer{Name: "y", Command: []string{"srv"}}); contract.CodeOf(err) != contract.CodeVaultPermissions {
		t.Errorf("adding to a vault others may read = %v, want vault_permissions", err)
	}
}
