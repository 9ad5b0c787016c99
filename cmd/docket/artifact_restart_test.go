package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

// A tool result cut to the runtime's inline bound is kept by the authority: after serve
// is killed and started again over the same data dir, a new runtime's MCP session reads
// the cut bytes with ReadArtifact, honouring offset and limit (docs/mcp.md, "Artifacts").
func TestServe_ArtifactOutlivesRestarts(t *testing.T) {
	bin := docketBinary(t)
	home := filepath.Join(t.TempDir(), "home")
	vars := map[string]string{"DOCKET_HOME": home, "DOCKET_PASSPHRASE": "correct horse battery"}
	e, out := testEnv(vars)
	if err := run(t.Context(), []string{"init"}, e); err != nil {
		t.Fatalf("docket init: %v\n%s", err, out)
	}
	srv := startServe(t, bin, home)
	cl := waitClient(t, e)
	var at contract.AgentToken
	if err := cl.do(t.Context(), http.MethodPost, projectPath("default", "agents"), contract.CreateAgentRequest{Name: "reader"}, &at); err != nil {
		t.Fatal(err)
	}
	base := serveBase(t, e)

	// The runtime's first life: a 40 000-byte result is cut to 1024 bytes, the rest kept.
	var b strings.Builder
	for i := 0; b.Len() < 40000; i++ {
		b.WriteString("row ")
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), 1+i%7))
		b.WriteString("\n")
	}
	full := b.String()
	bounder := agent.Bounder{Limit: 1024, Sink: agent.AuthorityArtifacts{API: &apiclient.Client{URL: base, Token: at.Token}}}
	shown, err := bounder.Bound(t.Context(), "QueryBoard", "call_1", []byte(full))
	if err != nil {
		t.Fatalf("Bound: %v", err)
	}
	m := regexp.MustCompile(`"ref": "(art_[0-9a-f]+)"`).FindStringSubmatch(shown)
	if m == nil {
		t.Fatalf("the cut result names no authority ref:\n%s", shown[len(shown)-200:])
	}
	ref := m[1]

	// serve dies without a goodbye and starts again; the runtime starts anew too.
	srv.kill(t)
	srv.wait()
	srv = startServe(t, bin, home)
	defer srv.stop(t)
	waitClient(t, e)
	base = serveBase(t, e)
	gw, err := mcpclient.Dial(t.Context(), mcpclient.Config{URL: base + "/mcp", Token: at.Token})
	if err != nil {
		t.Fatalf("dial the gateway after the restart: %v", err)
	}
	defer gw.Close()

	for _, tt := range []struct {
		offset, limit int
		want          string
		more          bool
	}{
		{1000, 300, full[1000:1300], true},
		{0, 0, full[:contract.MaxArtifactFragment], true},
		{len(full) - 50, 300, full[len(full)-50:], false},
	} {
		frag := readArtifact(t.Context(), t, gw, contract.ReadArtifactInput{Ref: ref, Offset: int64(tt.offset), Limit: tt.limit})
		if frag.Text != tt.want || frag.More != tt.more || frag.Size != int64(len(full)) || frag.Offset != int64(tt.offset) {
			t.Errorf("ReadArtifact %s at %d limit %d = %d bytes at %d of %d (more %v), want %d bytes of %d (more %v)",
				ref, tt.offset, tt.limit, len(frag.Text), frag.Offset, frag.Size, frag.More, len(tt.want), len(full), tt.more)
		}
	}
}

// serveBase is the running serve's base URL, as the data dir names it.
func serveBase(t *testing.T, e *env) string {
	t.Helper()
	dir, err := dataDir(e)
	if err != nil {
		t.Fatal(err)
	}
	u, err := serverURL(e, dir)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimRight(u, "/")
}

// readArtifact calls ReadArtifact through gw and returns the fragment it answered.
func readArtifact(ctx context.Context, t *testing.T, gw *mcpclient.Client, in contract.ReadArtifactInput) contract.ArtifactFragment {
	t.Helper()
	args, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gw.Call(ctx, contract.ToolReadArtifact, args)
	if err != nil {
		t.Fatalf("ReadArtifact: %v", err)
	}
	var tr contract.ToolResult
	var frag contract.ArtifactFragment
	if err := json.Unmarshal([]byte(r.Text), &tr); err != nil || json.Unmarshal(tr.Result, &frag) != nil {
		t.Fatalf("ReadArtifact answered %s", r.Text)
	}
	return frag
}
