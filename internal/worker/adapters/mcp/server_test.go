package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/slowtest"
)

// serverEnv, when set in a re-executed test binary, makes it an MCP server over stdio.
// It is not DOCKET_*: the adapter scrubs those from a server's environment.
const serverEnv = "MCP_ADAPTER_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		if err := newServer(nil).Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	slowtest.Main(m) // they start servers and processes: skipped under -short
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type empty struct{}

// newServer is the test MCP server, the same over stdio and HTTP. The hang tool answers
// when its call is cancelled or release is closed.
func newServer(release <-chan struct{}) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "test-server", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "adds", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "lines", Description: "text rows"},
		func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `[{"n":1},{"n":2}]`}, &sdk.TextContent{Text: "plain words"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "fails"},
		func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("the ledger is locked")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "big", Description: "too much"},
		func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", 1<<20+1)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "never answers"},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
			case <-release:
			}
			return nil, nil, errors.New("released")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "reports leaked secrets"},
		func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, map[string]any, error) {
			leaks := 0
			for _, kv := range os.Environ() {
				if strings.Contains(kv, "leak-value") {
					leaks++
				}
			}
			return nil, map[string]any{"leaks": leaks, "extra": os.Getenv("MCP_EXTRA")}, nil
		})
	return s
}
