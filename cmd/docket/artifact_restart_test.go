package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

// A tool result cut to the runtime's inline bound is kept by the authority: after serve
// is killed and started again over the same data dir, a new runtime's MCP session reads
// the cut bytes with ReadArtifact, honouring offset and limit (docs/mcp.md, "Artifacts"):
// those the runtime's Bounder cut in this process, and those a docket agent run process,
// ended before the restart, cut of its own result.
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

	// A real runtime process cuts a result of its own to 512 bytes and ends.
	dir := t.TempDir()
	tokFile, scriptFile := filepath.Join(dir, "token"), filepath.Join(dir, "script.json")
	if err := os.WriteFile(tokFile, []byte(at.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scriptFile, []byte(`{"turns":[{"calls":[{"tool":"OpenCase","arguments":{"caseType":"exploration","businessKey":{"topic":"`+strings.Repeat("tide tables ", 60)+`"}}}]},`+
		`{"calls":[{"tool":"QueryBoard","arguments":{"fullView":true}}]},{"final":"read"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rt := exec.Command(bin, "agent", "run", "--token-file", tokFile, "--script", scriptFile, "--output-limit", "512", "--conversation", "art-1", "read the Board")
	rt.Env = append(os.Environ(), "DOCKET_HOME="+home)
	if out, err := rt.CombinedOutput(); err != nil {
		t.Fatalf("docket agent run: %v\n%s", err, out)
	}
	var conv contract.Conversation
	if err := cl.do(t.Context(), http.MethodGet, projectPath("default", "agents", "reader", "conversations", "art-1"), nil, &conv); err != nil {
		t.Fatal(err)
	}
	var shownByProcess string
	for _, raw := range conv.Messages {
		var msg agent.Message
		if err := json.Unmarshal(raw, &msg); err != nil {
			t.Fatal(err)
		}
		for _, r := range msg.Results {
			shownByProcess = r.Content
		}
	}
	pm := regexp.MustCompile(`showing (\d+) of (\d+) bytes, \d+ cut\. Read the rest with ReadArtifact \{"ref": "(art_[0-9a-f]+)"\}\]$`).FindStringSubmatch(shownByProcess)
	if pm == nil {
		t.Fatalf("the runtime process's result names no authority ref:\n%s", shownByProcess)
	}
	shownBytes, _ := strconv.Atoi(pm[1])
	totalBytes, _ := strconv.Atoi(pm[2])

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

	// The process's artifact: its start is what the model was shown, its end follows.
	frag := readArtifact(t.Context(), t, gw, contract.ReadArtifactInput{Ref: pm[3], Offset: 0, Limit: shownBytes})
	if frag.Text != shownByProcess[:shownBytes] || frag.Size != int64(totalBytes) || !frag.More {
		t.Errorf("ReadArtifact %s from 0 limit %d = %q of %d, want the %d bytes the model was shown of %d", pm[3], shownBytes, frag.Text, frag.Size, shownBytes, totalBytes)
	}
	frag = readArtifact(t.Context(), t, gw, contract.ReadArtifactInput{Ref: pm[3], Offset: int64(totalBytes - 10), Limit: 100})
	if len(frag.Text) != 10 || frag.More {
		t.Errorf("ReadArtifact %s of the last 10 bytes = %q (more %v)", pm[3], frag.Text, frag.More)
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
