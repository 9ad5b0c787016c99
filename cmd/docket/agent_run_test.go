package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent/mcpclient"
	"github.com/docketrun/docket/internal/agent/mcpclient/gatewaytest"
)

// agentEnv is an env for the runtime commands against gw, with a scripted model.
func agentEnv(t *testing.T, gw *gatewaytest.Server, vars map[string]string) (*env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	vars["DOCKET_HOME"] = t.TempDir()
	vars["DOCKET_MCP_URL"] = gw.URL
	vars["DOCKET_TEST_CONVERSATIONS"] = filepath.Join(vars["DOCKET_HOME"], "conversations")
	return &env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return vars[k] }}, &stdout, &stderr
}

func writeScript(t *testing.T, js string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const twoTurns = `{"turns":[{"calls":[{"tool":"QueryBoard"},{"tool":"ApplyBatch","arguments":{}}]},{"final":"finished"}]}`

func TestAgentRun_ExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		token  string
		reply  func(gw *gatewaytest.Server) func(gatewaytest.Call) gatewaytest.Reply
		code   int
		stdout string
		stderr string
	}{
		{name: "the model finishes", token: gatewaytest.Token, code: exitOK, stdout: "scripted model (no inference): finished"},
		{name: "no agent token", token: "", code: exitCredential, stderr: "DOCKET_AGENT_TOKEN"},
		{name: "a rejected token", token: "not-the-token", code: exitCredential, stderr: "unauthenticated"},
		{name: "replaced by another client", token: gatewaytest.Token, code: exitReplaced, stderr: "connection_replaced",
			reply: func(gw *gatewaytest.Server) func(gatewaytest.Call) gatewaytest.Reply {
				return func(c gatewaytest.Call) gatewaytest.Reply {
					// Another runtime of the same Agent connects while the first one works.
					other, err := mcpclient.Dial(context.Background(), mcpclient.Config{URL: gw.URL, Token: gatewaytest.Token})
					if err == nil {
						other.Close()
					}
					return gatewaytest.Reply{}
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := gatewaytest.New(t)
			if tt.reply != nil {
				gw.Reply = tt.reply(gw)
			}
			e, stdout, stderr := agentEnv(t, gw, map[string]string{"DOCKET_AGENT_TOKEN": tt.token})
			err := run(t.Context(), []string{"agent", "run", "--conversation-dir", e.Getenv("DOCKET_TEST_CONVERSATIONS"), "--script", writeScript(t, twoTurns), "do it"}, e)
			if got := exitCode(err, stderr); got != tt.code {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", got, tt.code, stderr)
			}
			if !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stdout %q, stderr %q; want %q and %q in them", stdout, stderr, tt.stdout, tt.stderr)
			}
			if !strings.Contains(stderr.String(), "scripted model (no inference)") && tt.token == gatewaytest.Token {
				t.Errorf("stderr %q does not say the model is scripted", stderr)
			}
		})
	}
}

func TestAgentRun_NeverPrintsTheModelKey(t *testing.T) {
	const sentinel = "sk-SENTINEL-7f3a9c"
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A hostile endpoint echoes the key it was sent.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"invalid key %s","type":"invalid_request_error"}}`, r.Header.Get("Authorization"))
	}))
	defer model.Close()
	for _, how := range []string{"env", "file"} {
		t.Run(how, func(t *testing.T) {
			gw := gatewaytest.New(t)
			vars := map[string]string{"DOCKET_AGENT_TOKEN": gatewaytest.Token}
			args := []string{"agent", "run", "--conversation-dir", t.TempDir(), "--log-level", "debug", "--model-url", model.URL, "--model", "gpt-4o", "task"}
			if how == "env" {
				vars["DOCKET_MODEL_KEY"] = sentinel
			} else {
				p := filepath.Join(t.TempDir(), "key")
				if err := os.WriteFile(p, []byte(sentinel+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--model-key-file", p)
			}
			e, stdout, stderr := agentEnv(t, gw, vars)
			err := run(t.Context(), args, e)
			code := exitCode(err, stderr)
			if code != exitFailure || !strings.Contains(stderr.String(), "model_auth") && !strings.Contains(stderr.String(), "auth") {
				t.Errorf("exit %d, stderr %q; want 1 with the auth failure", code, stderr)
			}
			if strings.Contains(stdout.String()+stderr.String(), sentinel) {
				t.Fatalf("the model key was printed:\nstdout: %s\nstderr: %s", stdout, stderr)
			}
		})
	}
}

func TestAgentRun_ResumesAConversation(t *testing.T) {
	gw := gatewaytest.New(t)
	e, stdout, stderr := agentEnv(t, gw, map[string]string{"DOCKET_AGENT_TOKEN": gatewaytest.Token})
	script := writeScript(t, twoTurns)
	if err := run(t.Context(), []string{"agent", "run", "--conversation-dir", e.Getenv("DOCKET_TEST_CONVERSATIONS"), "--script", script, "--conversation", "job-1", "do it"}, e); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	// A second run of a finished conversation with no new words calls nothing.
	stdout.Reset()
	if err := run(t.Context(), []string{"agent", "run", "--conversation-dir", e.Getenv("DOCKET_TEST_CONVERSATIONS"), "--script", script, "--conversation", "job-1"}, e); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr)
	}
	if n := len(gw.Calls()); n != 2 {
		t.Errorf("the gateway received %d calls, want the first run's 2", n)
	}
	if !strings.Contains(stdout.String(), "finished") {
		t.Errorf("resume printed %q, want the final answer", stdout)
	}
}

// TestAgentServe_NeedsTheAuthority: docket agent serve takes its tasks from the authority
// by long-poll, so it refuses, as a usage error, to keep conversations in files.
func TestAgentServe_NeedsTheAuthority(t *testing.T) {
	gw := gatewaytest.New(t)
	e, _, _ := agentEnv(t, gw, map[string]string{"DOCKET_AGENT_TOKEN": gatewaytest.Token})
	err := run(t.Context(), []string{"agent", "serve", "--conversation-dir", e.Getenv("DOCKET_TEST_CONVERSATIONS"), "--script", writeScript(t, twoTurns)}, e)
	if _, ok := errors.AsType[*usageError](err); !ok || !strings.Contains(err.Error(), "--conversation-dir") {
		t.Errorf("agent serve --conversation-dir = %v, want a usage error naming the flag", err)
	}
}
