package worker

import "github.com/docketrun/docket/internal/contract"

// Workspace operations, the entries of the built-in workspace Tools.
// There is deliberately no delete, move or shell operation.
const (
	OpList      = "list"
	OpCount     = "count"
	OpSearch    = "search"
	OpReadText  = "read_text"
	OpReadJSON  = "read_json"
	OpHash      = "hash"
	OpWriteText = "write_text"
	OpWriteJSON = "write_json"
)

// MCPDiscoverTool lists the tools of an mcp Source. It is the one built-in mcp Tool and
// the only one with an empty entry, which the mcp adapter reads as "discover".
const MCPDiscoverTool contract.ToolID = "docket.mcp.discover@1"

// MCPToolPredicate is the fact each tool docket.mcp.discover@1 lists becomes, run as a
// direct Action: mcp_tool(source, name, description, input_schema, output_schema,
// read_only, truncated). An mcp Source whose tools are discovered so attests it.
const MCPToolPredicate = "mcp_tool"

// MaterialReadTool reads a material from the material area, bound as a file Source
// (docs/materials.md). Its rows carry the text by reference only.
const MaterialReadTool contract.ToolID = "docket.material.read@1"

// WorkspaceTool returns the id of the built-in workspace Tool for op.
func WorkspaceTool(op string) contract.ToolID {
	return contract.ToolID("docket.workspace." + op + "@1")
}

// builtinTools returns the definitions of the built-in workspace Tools; they run against
// one file Source.
func builtinTools() map[contract.ToolID]Tool {
	path := Param{Type: ParamString, Required: true}
	optPath := Param{Type: ParamString}
	def := func(op, kind string, params map[string]Param, returns ...string) Tool {
		return Tool{Adapter: AdapterWorkspace, SourceTypes: []string{"file"}, Entry: op, Kind: kind, Params: params, Returns: returns}
	}
	tools := map[contract.ToolID]Tool{
		WorkspaceTool(OpList):      def(OpList, contract.ToolKindRead, map[string]Param{"path": optPath}, "path", "kind", "size"),
		WorkspaceTool(OpCount):     def(OpCount, contract.ToolKindRead, map[string]Param{"path": optPath}, "files", "dirs"),
		WorkspaceTool(OpSearch):    def(OpSearch, contract.ToolKindRead, map[string]Param{"path": optPath, "pattern": path}, "path", "line", "text"),
		WorkspaceTool(OpReadText):  def(OpReadText, contract.ToolKindRead, map[string]Param{"path": path}, "path", "text"),
		WorkspaceTool(OpReadJSON):  def(OpReadJSON, contract.ToolKindRead, map[string]Param{"path": path}),
		WorkspaceTool(OpHash):      def(OpHash, contract.ToolKindRead, map[string]Param{"path": path}, "path", "sha256", "size"),
		WorkspaceTool(OpWriteText): def(OpWriteText, contract.ToolKindWrite, map[string]Param{"path": path, "text": path}, "path", "sha256", "size"),
	}
	tools[MaterialReadTool] = Tool{Adapter: AdapterMaterial, SourceTypes: []string{"file"}, Entry: "read", Kind: contract.ToolKindRead,
		Params:  map[string]Param{"material": path, "offset": {Type: ParamInteger}, "limit": {Type: ParamInteger}, "page": {Type: ParamInteger}},
		Returns: []string{"material", "size", "offset", "bytes", "truncated", "page", "pages", "text"}}
	// Run as a direct Action (the console's tools page runs it so, as a governed read),
	// each tool the server lists lands as an mcp_tool fact of the Source it was read
	// from, which the page reads back to offer the tools (docs/tools.md).
	tools[MCPDiscoverTool] = Tool{Adapter: AdapterMCP, SourceTypes: []string{"mcp"}, Kind: contract.ToolKindRead,
		Returns: []string{"name", "description", "inputSchema", "outputSchema", "readOnly", "truncated"},
		Facts: []Fact{{Predicate: MCPToolPredicate, Args: map[string]string{"source": "$source", "name": "$name", "description": "$description",
			"input_schema": "$inputSchema", "output_schema": "$outputSchema", "read_only": "$readOnly", "truncated": "$truncated"}}}}
	wj := def(OpWriteJSON, contract.ToolKindWrite, map[string]Param{"path": path}, "path", "sha256", "size")
	wj.openArgs = true
	tools[WorkspaceTool(OpWriteJSON)] = wj
	return tools
}
