// House rules that tests keep rather than memory: which packages may import
// what, one doc comment per package, and no encoding error dropped.
package docket_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority/event"
)

const module = "github.com/docketrun/docket/"

// pkg is one package directory's non-test files, parsed for imports and doc comments.
type pkg struct {
	dir     string
	files   []string            // paths of the non-test files
	imports map[string][]string // import path -> files importing it
	docs    []string            // files carrying a package doc comment
}

// walkGo calls fn with the path of every Go file of the module, tests included, outside
// hidden directories and testdata.
func walkGo(fn func(path string) error) error {
	return filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go"):
			return nil
		}
		return fn(path)
	})
}

func loadPackages(t *testing.T) map[string]*pkg {
	t.Helper()
	pkgs := map[string]*pkg{}
	err := walkGo(func(path string) error {
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		p := pkgs[dir]
		if p == nil {
			p = &pkg{dir: dir, imports: map[string][]string{}}
			pkgs[dir] = p
		}
		p.files = append(p.files, path)
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			p.imports[ip] = append(p.imports[ip], path)
		}
		if f.Doc != nil {
			p.docs = append(p.docs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// depRule governs one package directory's imports: allowed says which module-internal and
// third-party imports it may make, std which standard-library imports it may not, calls
// which source text it may not hold, each with why.
type depRule struct {
	dir     string
	allowed func(imp string) bool // for module-internal and third-party imports
	std     map[string]string     // forbidden standard-library imports and why
	calls   map[string]string     // forbidden source text (a call) and why
	why     string
}

// depRules is the one table of import rules: it keeps the core pure and the layers
// pointing inward. Every package directory has exactly one rule
// (TestDepsCoverEveryPackage), so a new package states its place when it is made.
func depRules() []depRule {
	pureStd := map[string]string{
		"database/sql":  "the Board is pure: storage is the authority's business",
		"net":           "the Board is pure: no network",
		"net/http":      "the Board is pure: no network",
		"os":            "the Board is pure: files are read at the edges",
		"os/exec":       "the Board is pure: no processes",
		"io/fs":         "the Board is pure: files are read at the edges",
		"path/filepath": "the Board is pure: files are read at the edges",
		"syscall":       "the Board is pure",
		"unsafe":        "the Board needs no unsafe",
		"sync":          "the Board is not safe for concurrent use; the authority serializes",
		"log":           "the Board is pure: it returns errors, callers log",
		"log/slog":      "the Board is pure: it returns errors, callers log",
		"math/rand":     "the Board is deterministic: ids are derived, never random",
		"math/rand/v2":  "the Board is deterministic: ids are derived, never random",
		"crypto/rand":   "the Board is deterministic: ids are derived, never random",
	}
	pureCalls := map[string]string{
		"time.Now(": "the Board receives the time as an argument",
	}
	edgeStd := map[string]string{
		"database/sql": "an HTTP edge calls the authority, never a database",
	}
	storeStd := map[string]string{
		"database/sql": "only the stores and the db adapter open a database",
	}
	storeNoHTTP := map[string]string{
		"net/http": "a store holds records; it serves and calls no HTTP",
	}
	return []depRule{
		{"internal/contract", none, map[string]string{"net/http": "the code→status map is edge policy; contract holds wire types, IDs and codes"}, nil,
			"contract imports only the standard library"},
		{"internal/board", within("internal/contract", "internal/board/engine"), pureStd, pureCalls,
			"board imports only the standard library, contract and its own engine"},
		{"internal/board/engine", within("internal/contract"), pureStd, pureCalls, "the engine imports only the standard library and contract"},
		{"internal/board/syntax", within("internal/contract", "internal/board/engine"), pureStd, pureCalls, "the rule syntax is pure"},
		{"internal/store", within("internal/contract"), nil, nil, "store never imports its implementations"},
		{"internal/authority", within("internal/contract", "internal/store", "internal/board", "internal/board/", "internal/capability", "internal/grant", "internal/authority/", "internal/signing", "golang.org/x/crypto/", "github.com/gowebpki/jcs"), nil, nil,
			"the authority uses store.Store, board, capability and contract, never a concrete store"},
		{"internal/authority/event", within("internal/contract"), nil, nil, "the event catalog is a leaf"},
		{"internal/authority/eventlog", within("internal/contract", "internal/store", "internal/authority/event"), nil, nil, "the log is read and appended through store.Store alone, each event as a payload of the catalog"},
		{"internal/authority/eventlog/eventlogtest", within("internal/contract", "internal/store", "internal/authority/event", "internal/authority/eventlog"), nil, nil, "a State's tests build their logs in memory"},
		{"internal/authority/identity", within("internal/contract", "internal/store", "internal/authority/event", "internal/authority/eventlog", "internal/signing", "golang.org/x/crypto/"), nil, nil,
			"identity knows no Board, Operation or dispatch"},
		{"internal/authority/boards", within("internal/contract", "internal/store", "internal/board", "internal/board/", "internal/capability", "internal/authority/event", "internal/authority/eventlog", "internal/authority/identity", "internal/signing"), nil, nil,
			"the Board cache knows no Operation or dispatch"},
		{"internal/authority/conversation", within("internal/contract", "internal/store", "internal/authority/event", "internal/authority/eventlog", "internal/authority/identity"), nil, nil,
			"conversations know no Board, Operation or dispatch"},
		{"internal/authority/task", within("internal/contract", "internal/store", "internal/authority/event", "internal/authority/eventlog", "internal/authority/identity"), nil, nil,
			"tasks know no Board, Operation or dispatch: they read Operation states from the log"},
		{"internal/authority/operation", within("internal/contract", "internal/store", "internal/board", "internal/board/", "internal/policy", "internal/grant", "internal/bytememo", "internal/authority/boards", "internal/authority/event", "internal/authority/eventlog", "internal/authority/identity", "internal/authority/policy", "github.com/gowebpki/jcs",
			"go.opentelemetry.io/otel/attribute", "go.opentelemetry.io/otel/trace"), nil, nil,
			"an Operation's whole life, from admission to the worker hop's report, is one package over the authority's parts, never a concrete store; it traces through the caller's span alone"},
		{"internal/authority/policy", within("internal/contract", "internal/store", "internal/policy", "internal/authority/event", "internal/authority/eventlog", "internal/authority/identity"), nil, nil,
			"published policies know no Board, Operation or dispatch; the parser is internal/policy"},
		{"internal/authority/materials", within("internal/contract", "internal/store", "internal/authority/event", "internal/authority/eventlog", "internal/authority/identity"), nil, nil,
			"materials know a file's metadata and its disclosure, never its bytes"},
		{"internal/authority/profile", within("internal/contract", "internal/store", "internal/price", "internal/authority/event", "internal/authority/eventlog", "internal/authority/identity"), nil, nil,
			"profiles know no Board, Operation or dispatch, and never a model key"},
		{"internal/schedule", within("github.com/robfig/cron/v3"), pureStd, pureCalls, "the schedule core is pure: the time is an argument, the cron parser a library"},
		{"internal/authority/schedule", within("internal/contract", "internal/store", "internal/schedule", "internal/authority/event", "internal/authority/eventlog", "internal/authority/identity"), nil, nil,
			"schedules know no Board, Operation or dispatch: a fire posts its task through the facade"},
		{"internal/authority/notice", within("internal/contract", "internal/store", "internal/signing", "internal/authority/event", "internal/authority/eventlog", "internal/authority/identity"), nil, nil,
			"notices read the log and send through the standard library: they know no Board, Operation or dispatch"},
		{"internal/authority/opclass", none, nil, nil, "the table of operation classes is a leaf: the console, the facade and the CLI read it"},
		{"internal/authority/authoritytest", within("internal/contract", "internal/store", "internal/authority", "internal/authority/identity", "internal/authority/operation", "internal/signing", "github.com/jackc/pgx/"), nil, nil,
			"the test helper builds authorities through the facade; it names no concrete store, only makes a PostgreSQL database for one"},
		{"internal/policy", within("internal/contract", "internal/authority/opclass", "github.com/BurntSushi/toml", "mvdan.cc/sh/v3/syntax"), nil, nil, "the policy parser is pure: documents in, checked policies out; a delegate policy names operations of the one table; a command is split by a POSIX shell parser"},
		{"internal/authority/bundle", within("internal/contract", "internal/store", "internal/signing", "internal/authority/boards", "internal/authority/event", "internal/authority/eventlog"), nil, nil, "a bundle is read from and checked against the store's own chain, with the Board's checks"},
		{"internal/httpstatus", within("internal/contract"), nil, nil, "the shared statuses are a leaf of the HTTP edges"},
		{"internal/secheaders", none, nil, nil, "the security headers are a leaf of the HTTP edges"},
		{"internal/localpath", none, nil, nil, "the same-origin check of a redirect target is a leaf of the HTTP edges"},
		{"internal/console", within("internal/contract", "internal/authority", "internal/authority/event", "internal/authority/identity", "internal/authority/opclass", "internal/httpstatus", "internal/secheaders", "internal/localpath", "internal/signing"), edgeStd, nil, "the console calls the authority and its identity directory, never the store; it serves the signed checkpoints the authority makes, reads events through the catalog and routes through the operation table"},
		{"internal/console/browsertest", within("github.com/chromedp/"), nil, nil, "the browser harness of the console's tests reaches the console only as a browser does"},
		{"internal/gateway", within("internal/contract", "internal/authority", "internal/authority/identity", "internal/authority/operation", "github.com/modelcontextprotocol/go-sdk/"), edgeStd, nil,
			"the gateway calls the authority's identity directory and Operations, never the store or the Board; workers and agents reach the authority only over the wire"},
		{"internal/workhop", within("internal/contract", "internal/authority", "internal/authority/identity", "internal/httpstatus", "internal/bytememo"), edgeStd, nil, "the worker hop calls the authority's identity directory and Dispatcher, never the store"},
		{"internal/worker", within("internal/contract", "internal/material", "internal/grant", "internal/environ", "internal/landing", "internal/certs", "github.com/gowebpki/jcs", "go.opentelemetry.io/otel/"), nil, nil, "a worker reaches the authority only over the wire, trusting serve's certificate as certs says"},
		{"internal/failover", within("internal/contract"), nil, nil, "a client's list of serves is a leaf: the worker and the runtime's transports share it"},
		{"internal/certs", within("internal/contract"), nil, nil, "TLS certificates and a client's trust are a leaf: serve, the worker, the runtime and the CLI share it"},
		{"internal/worker/adapters/http", within("internal/contract", "internal/grant", "internal/worker", "internal/signing", "github.com/gowebpki/jcs", "go.opentelemetry.io/otel/"), nil, nil, "the http adapter signs outbound requests with the signing leaf (RFC 9421)"},
		{"internal/telemetry", within("internal/contract", "internal/store", "internal/authority/event", "github.com/prometheus/client_golang/", "go.opentelemetry.io/otel/",
			"github.com/modelcontextprotocol/go-sdk/mcp"), edgeStd, nil,
			"telemetry knows the edges' hooks, the store's interface and the event catalog (a leaf), never the authority or a concrete store"},
		{"internal/worker/hardening", within("golang.org/x/sys/"), nil, nil, "hardening the worker's own process is a leaf"},
		{"internal/grant", within("internal/contract", "github.com/gowebpki/jcs"), nil, nil, "grants are a leaf shared by the authority and workers"},
		{"internal/bytememo", none, nil, nil, "remembering values by the bytes they were made from is a leaf: the worker hop's Poll bodies and the operation ledger's request digests"},
		{"internal/price", none, nil, nil, "the one price table is a leaf: the runtime's run budgets and the authority's budgets read it"},
		{"internal/authority/budget", within("internal/contract", "internal/store", "internal/price", "internal/authority/event", "internal/authority/eventlog", "internal/authority/identity"), nil, nil,
			"budgets are kept in the store and priced from the one table; each change is an event of the catalog"},
		{"internal/agent", within("internal/contract", "internal/agent/", "internal/price", "internal/material", "github.com/BurntSushi/toml", "go.opentelemetry.io/otel/"), nil, nil, "the agent runtime reaches the authority only over the wire; it reads a material's text from the local material area"},
		{"internal/material", within("internal/contract", "internal/material/pdftext"), nil, nil, "the material area is a leaf: docket start, the worker and the runtime keep and read a material's bytes on their machine, never the authority"},
		{"internal/material/pdftext", within("github.com/ledongthuc/pdf"), storeStd, nil, "a PDF's text is read by a parsing library within bounds of time and size; nothing else"},
		{"internal/agent/provider/providertest", within("internal/contract", "internal/agent", "internal/agent/provider/scripted"), nil, nil,
			"the test model servers play a script over the providers' wire formats, read on the server's side"},
		{"internal/apiclient", within("internal/contract", "github.com/gowebpki/jcs"), nil, nil, "the /api/v1 client speaks only the wire"},
		{"internal/datadir", none, nil, nil, "the data dir's layout is a leaf"},
		{"internal/environ", none, nil, nil, "the allow-list of started programs' environments is a leaf: the worker, docket start and the hook share it"},
		{"internal/landing", none, nil, nil, "where a path lands is one check, a leaf the worker and the hook share"},
		{"internal/hook", within("internal/contract", "internal/landing"), edgeStd, nil, "the hook's protocol-neutral side reaches the authority only through the client it is given"},
		{"internal/hook/claudecode", within("internal/contract", "internal/hook", "internal/environ", "internal/datadir"), edgeStd, nil,
			"one coding agent's hook protocol, spoken for package hook, and its install: settings written privately (datadir), git run under the allow-listed environment (environ)"},
		{"internal/signing", within("internal/datadir"), nil, nil, "signing keys and checkpoints are a leaf, checked with the standard library alone"},
		{"internal/workbench", within("internal/contract", "internal/material", "internal/apiclient", "internal/datadir", "internal/supervisor", "internal/secheaders", "internal/environ", "internal/localpath",
			"internal/worker", "internal/worker/toolset", "internal/agent", "internal/agent/mcpclient"), nil, nil,
			"docket start supervises processes and reaches serve only over the wire; its tools page writes its own worker's manifest and vault through toolset, and runs an MCP server's discovery as an Agent's governed read over /mcp"},
		{"internal/agent/runner", within("internal/contract", "internal/agent", "internal/agent/", "internal/apiclient", "internal/datadir", "internal/material", "internal/certs", "internal/failover", "go.opentelemetry.io/otel/trace"), nil, nil,
			"the agent runtime's assembly names providers but reaches the authority only over the wire"},
		{"internal/demo", within("internal/contract", "internal/agent", "internal/agent/", "internal/apiclient", "internal/datadir", "internal/workbench",
			"internal/supervisor", "internal/capability", "internal/worker", "internal/worker/adapters/workspace", "examples/verified-calculation", "github.com/BurntSushi/toml"), nil, nil,
			"the demo drives serve, a worker and an agent as a person would: over the wire"},
		{"internal/floor", none, nil, nil, "the floor runner is test support for benchmarks: it builds programs kept outside the repository"},
		{"internal/slowtest", none, nil, nil, "the -short switch of the slow tests is a leaf every package's tests may import"},
		{"internal/debpkg", within("github.com/goreleaser/nfpm/v2", "github.com/goreleaser/nfpm/v2/"), nil, nil, "the Debian package is built from files and a binary, with the packaging library; it knows nothing of docket's code"},
		{"cmd/docket-package", within("internal/debpkg"), nil, nil, "the packaging tool of the build is its own command, so the packaging library stays out of the docket binary"},
		{"cmd/docket", within("internal/", "github.com/alecthomas/kong", "github.com/modelcontextprotocol/go-sdk/mcp", "go.opentelemetry.io/otel/trace", "golang.org/x/term"), nil, nil,
			"only cmd/docket names a concrete store, adapter or provider: it wires the internal packages together and parses flags (CONTRIBUTING.md)"},
		{"examples/verified-calculation", none, nil, nil, "the reference workflow is files, embedded with the standard library alone"},
		{"internal/capability", within("internal/contract", "internal/board", "internal/board/engine", "internal/board/syntax", "github.com/BurntSushi/toml"), storeStd, nil,
			"a capability package is read and checked with the Board's syntax, never stored or fetched here"},
		{"internal/store/tables", within("internal/store"), storeNoHTTP, nil, "the shared SQL schema's records are written for store.Store alone; the driver is the backend's"},
		{"internal/store/sqlite", within("internal/store", "internal/store/tables", "modernc.org/sqlite", "modernc.org/sqlite/"), storeNoHTTP, nil,
			"the SQLite backend knows store.Store, the shared tables and its driver, never the authority or the Board"},
		{"internal/store/postgres", within("internal/store", "internal/store/tables", "github.com/jackc/pgx/v5", "github.com/jackc/pgx/v5/"), storeNoHTTP, nil,
			"the PostgreSQL backend knows store.Store, the shared tables and its driver, never the authority or the Board"},
		{"internal/store/storecount", within("internal/store"), storeNoHTTP, nil,
			"the counting store is bench support over store.Store alone, for any backend"},
		{"internal/store/storetest", within("internal/store", "internal/slowtest", "github.com/google/go-cmp/"), nil, nil,
			"the conformance suite runs against store.Store alone, so neither backend can drift"},
		{"internal/supervisor", none, nil, nil, "supervising child processes is a leaf: it knows no Docket type"},
		{"internal/localpath/localpathtest", none, nil, nil, "the hostile redirect targets of the doors' tests are a leaf"},
		{"internal/agent/sse", none, storeStd, nil, "the reader of model event streams is a leaf of the providers"},
		{"internal/agent/mcpclient", within("internal/agent", "internal/contract", "github.com/modelcontextprotocol/go-sdk/"), storeStd, nil,
			"the agent runtime reaches the gateway over MCP alone"},
		{"internal/agent/mcpclient/gatewaytest", within("internal/contract", "github.com/modelcontextprotocol/go-sdk/mcp"), storeStd, nil,
			"the gateway double answers over MCP as the gateway does, with no authority behind it"},
		{"internal/agent/provider/anthropic", within("internal/agent", "internal/agent/sse", "internal/contract"), storeStd, nil, "a provider speaks one model API over net/http; it never reaches the authority"},
		{"internal/agent/provider/openai", within("internal/agent", "internal/agent/sse", "internal/contract"), storeStd, nil, "a provider speaks one model API over net/http; it never reaches the authority"},
		{"internal/agent/provider/emulated", within("internal/agent", "internal/contract"), storeStd, nil, "a provider speaks one model API over net/http; it never reaches the authority"},
		{"internal/agent/provider/scripted", within("internal/agent", "internal/contract", "github.com/BurntSushi/toml"), storeStd, nil, "the scripted provider replays a script; it never reaches the authority"},
		{"internal/worker/adapters/run", within("internal/contract", "internal/worker"), storeStd, nil, "an adapter serves the worker its calls; it reaches the authority only through the worker"},
		{"internal/worker/adapters/material", within("internal/contract", "internal/worker", "internal/material"), nil, nil,
			"the material adapter reads the material area and returns references, never text"},
		{"internal/worker/adapters/workspace", within("internal/contract", "internal/worker", "internal/landing"), storeStd, nil,
			"an adapter serves the worker its calls; where a path lands is the one check the worker shares (landing)"},
		{"internal/worker/adapters/mcp", within("internal/contract", "internal/worker", "github.com/modelcontextprotocol/go-sdk/mcp"), storeStd, nil,
			"an adapter serves the worker its calls; it reaches the authority only through the worker"},
		{"internal/worker/toolset", within("internal/contract", "internal/worker", "internal/worker/adapters/"), storeStd, nil,
			"adding Tools and Sources edits the worker's own files and checks them with its adapters; it reaches the authority never"},
		{"internal/worker/adapters/dbquery", within("internal/contract", "internal/worker", "github.com/jackc/pgx/v5/stdlib", "modernc.org/sqlite"), nil, nil,
			"an adapter serves the worker its calls against a Source's database, never Docket's store"},
	}
}

// TestDeps holds every package to its rule in [depRules].
func TestDeps(t *testing.T) {
	pkgs := loadPackages(t)
	for _, r := range depRules() {
		p := pkgs[r.dir]
		if p == nil {
			continue // TestDepsCoverEveryPackage names a rule without a package
		}
		for imp, files := range p.imports {
			if reason, bad := r.std[imp]; bad {
				t.Errorf("%s imports %q: %s", files[0], imp, reason)
				continue
			}
			if isStd(imp) {
				continue
			}
			if !r.allowed(imp) {
				t.Errorf("%s imports %q: %s", files[0], imp, r.why)
			}
		}
		for _, f := range p.files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for call, reason := range r.calls {
				if strings.Contains(string(src), call) {
					t.Errorf("%s calls %s: %s", f, strings.TrimSuffix(call, "("), reason)
				}
			}
		}
	}
}

// TestDepsCoverEveryPackage wants exactly one rule in [depRules] for every package
// directory, and a package for every rule: a package without a rule would import
// anything unseen, and a rule without a package guards nothing.
func TestDepsCoverEveryPackage(t *testing.T) {
	pkgs := loadPackages(t)
	ruled := map[string]bool{}
	for _, r := range depRules() {
		if ruled[r.dir] {
			t.Errorf("depRules has two rules for %s; keep one", r.dir)
		}
		ruled[r.dir] = true
		if pkgs[r.dir] == nil {
			t.Errorf("depRules has a rule for %s, which holds no package; remove the rule", r.dir)
		}
	}
	for dir := range pkgs {
		if !ruled[dir] {
			t.Errorf("%s has no rule in depRules; add one that says what it may import and why", dir)
		}
	}
}

func isStd(imp string) bool { return !strings.Contains(strings.Split(imp, "/")[0], ".") }

func none(string) bool { return false }

// within allows imports whose path equals one of prefixes, or starts with one that ends in
// "/". A prefix without a dot in its first element is relative to this module.
func within(prefixes ...string) func(string) bool {
	return func(imp string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool {
			if isStd(p) {
				p = module + p
			}
			return imp == p || strings.HasSuffix(p, "/") && strings.HasPrefix(imp, p)
		})
	}
}

// maxCmdLines bounds a non-test file of cmd/: a command's file parses flags, calls the
// package that does the work and prints what it returns (CONTRIBUTING.md). A file that
// grows past it holds work that belongs in a package, tested there.
const maxCmdLines = 250

// TestCmdIsWiring wants no non-test file under cmd/ over maxCmdLines lines.
func TestCmdIsWiring(t *testing.T) {
	for dir, p := range loadPackages(t) {
		if dir != "cmd" && !strings.HasPrefix(dir, "cmd/") {
			continue
		}
		for _, f := range p.files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(src, []byte("\n")); n > maxCmdLines {
				t.Errorf("%s has %d lines, over %d: cmd/ is wiring; move what is not flag parsing or printing into the package it belongs to, with its tests", f, n, maxCmdLines)
			}
		}
	}
}

// TestPackageDocs wants exactly one package doc comment in every package, so that go doc
// is the map of the system.
func TestPackageDocs(t *testing.T) {
	for dir, p := range loadPackages(t) {
		switch len(p.docs) {
		case 1:
		case 0:
			t.Errorf("package %s has no doc comment; add one sentence saying what it provides (doc.go)", dir)
		default:
			t.Errorf("package %s has %d doc comments (%s); keep one", dir, len(p.docs), strings.Join(p.docs, ", "))
		}
	}
}

// TestEncodingErrorsHandled wants every encoding error of non-test code returned or
// handled: an ignored json.Marshal error once wrote null into a project's hash chain, the
// claim it held was lost and the Operation waited at the worker forever. A
// call below whose error is assigned to _ or whose results are dropped is refused.
func TestEncodingErrorsHandled(t *testing.T) {
	encoders := []struct {
		recv, name string // recv "" matches any receiver: a method such as Encoder.Encode
		args       int    // tells Encoder.Encode(v) from hex.Encode(dst, src), which cannot fail
	}{
		{"json", "Marshal", 1},
		{"json", "MarshalIndent", 3},
		{"", "Encode", 1},
		{"jcs", "Transform", 1},
		// Decoding and reading outside input: a dropped error leaves a zero value that
		// reads as an answer.
		{"json", "Unmarshal", 2},
		{"", "Decode", 1},
		{"io", "ReadAll", 1},
	}
	encoding := func(e ast.Expr) (string, bool) {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok {
			return "", false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return "", false
		}
		recv, _ := sel.X.(*ast.Ident)
		for _, enc := range encoders {
			if sel.Sel.Name == enc.name && len(call.Args) == enc.args && (enc.recv == "" || recv != nil && recv.Name == enc.recv) {
				return enc.recv + "." + enc.name, true
			}
		}
		return "", false
	}
	for _, p := range loadPackages(t) {
		for _, path := range p.files {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				var call ast.Expr
				switch n := n.(type) {
				case *ast.AssignStmt:
					if len(n.Rhs) == 1 {
						if last, ok := n.Lhs[len(n.Lhs)-1].(*ast.Ident); ok && last.Name == "_" {
							call = n.Rhs[0]
						}
					}
				case *ast.ExprStmt:
					call = n.X
				case *ast.GoStmt:
					call = n.Call
				case *ast.DeferStmt:
					call = n.Call
				}
				if call == nil {
					return true
				}
				if name, ok := encoding(call); ok {
					t.Errorf("%s: the error of %s is dropped; return it, or handle it with meaning (log it when the response is already started; branch on it when a shape that does not decode is expected)",
						fset.Position(call.Pos()), strings.TrimPrefix(name, "."))
				}
				return true
			})
		}
	}
}

// TestEventTypesNamedOnce refuses a string literal equal to an event type of the catalog
// anywhere but the catalog, test files included: a reader that names a type by its string
// compiles after the type is renamed and silently reads nothing, where one that names the
// catalog's constant does not compile (docs/architecture.md, "Event catalog"). The few
// files below hold such a string that is not an event's type, each for the reason given.
func TestEventTypesNamedOnce(t *testing.T) {
	types := map[string]bool{}
	for _, k := range event.Catalog {
		types[k.Type] = true
	}
	notTypes := map[string]string{
		"internal/signing/checkpoint.go":        "a checkpoint's reason names the event that sealed it; the signing leaf imports no catalog, and stored checkpoints keep these words",
		"internal/authority/opclass/opclass.go": "an operation class is named for what it does, and one class shares its name with the event it appends",
		"internal/store/storetest/decisions.go": "the store's conformance suite replays a migration that reads request.created rows in SQL; the store imports no authority package",
	}
	err := walkGo(func(path string) error {
		if _, ok := notTypes[filepath.ToSlash(path)]; ok || filepath.ToSlash(filepath.Dir(path)) == "internal/authority/event" {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if _, ok := n.(*ast.ImportSpec); ok {
				return false
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && types[s] {
				t.Errorf("%s: %s is an event type; name it by the catalog's constant (internal/authority/event)", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestShortDecidedOnce wants testing.Short read only by internal/slowtest, so that -short
// means one thing in every package: the pure packages and the SQLite conformance suite
// run, and nothing that starts a server, a process, a browser or a database
// (CONTRIBUTING.md, Running things). A slow package's TestMain calls slowtest.Main; a slow
// test among quick ones calls slowtest.Skip.
func TestShortDecidedOnce(t *testing.T) {
	err := walkGo(func(path string) error {
		if filepath.ToSlash(filepath.Dir(path)) == "internal/slowtest" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(src), "testing."+"Short()") { // split, or this file would match
			t.Errorf("%s reads testing.Short: skip under -short with internal/slowtest instead", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCommentsCiteDocs: a comment says why by citing the repository's docs, never an
// issue of a tracker the repository does not hold (CONTRIBUTING.md).
func TestCommentsCiteDocs(t *testing.T) {
	issue := regexp.MustCompile(`(?i)\bissues? \d+`)
	err := walkGo(func(path string) error {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				if m := issue.FindString(c.Text); m != "" {
					t.Errorf("%s: the comment cites %q; cite the doc that says why (docs/*.md) instead", fset.Position(c.Pos()), m)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
