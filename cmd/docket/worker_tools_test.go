package main

import (
	"context"
	"fmt"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type testReadIn struct {
	Path string `json:"path"`
}

type testWriteIn struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type testReadOut struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type testEditIn struct {
	Path  string   `json:"path"`
	Edits []string `json:"edits"`
}

// testMCPServer is docket-test-mcp-server, the MCP server (official Go SDK, over stdio)
// of the worker_tools script: a read with structured output, a write without, and a tool
// whose required array maps to no param.
func testMCPServer() {
	s := sdk.NewServer(&sdk.Implementation{Name: "files", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "read_file", Description: "reads a file", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in testReadIn) (*sdk.CallToolResult, testReadOut, error) {
			return nil, testReadOut{Path: in.Path, Content: "hello"}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "write_file", Description: "writes a file"},
		func(_ context.Context, _ *sdk.CallToolRequest, in testWriteIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "wrote " + in.Path}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "edit_file", Description: "edits a file"},
		func(_ context.Context, _ *sdk.CallToolRequest, in testEditIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
