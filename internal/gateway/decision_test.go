package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docketrun/docket/internal/contract"
)

func markCall(topic string) contract.ApplyActionInput {
	return contract.ApplyActionInput{Action: "mark", Params: contract.Args{"topic": str(topic)}}
}

// pending returns the project's pending Requests.
func (f *fixture) pending(t *testing.T) []contract.Request {
	t.Helper()
	rs, err := f.ops.Operations().Requests(context.Background(), f.admin, "default")
	if err != nil {
		t.Fatal(err)
	}
	var out []contract.Request
	for _, r := range rs {
		if r.State == contract.RequestPending {
			out = append(out, r)
		}
	}
	return out
}

func (f *fixture) marked(t *testing.T, cs *mcp.ClientSession) int {
	t.Helper()
	q, _ := call(t, cs, "QueryBoard", contract.QueryBoardInput{Pattern: &contract.Atom{Predicate: "marked", Args: contract.Args{"topic": str("?t")}}})
	return strings.Count(string(q.Result), `"predicate":"marked"`)
}

func TestGateway_Decisions(t *testing.T) {
	f := newFixture(t, time.Minute)
	cs := f.connect(t, nil)
	ctx := context.Background()

	res, _ := call(t, cs, "ApplyAction", markCall("a"))
	if !res.Accepted || len(res.Operations) == 0 || res.Operations[0].State != contract.OpWaitingForDecision {
		t.Fatalf("ApplyAction needing a person = %+v, want accepted and waiting_for_decision (not held)", res.Operations)
	}
	reqs := f.pending(t)
	if len(reqs) != 1 || res.Operations[0].Decision != string(reqs[0].ID) || !strings.HasPrefix(reqs[0].Digest, "sha256:") {
		t.Fatalf("requests = %+v, want one pending, named in the strip", reqs)
	}
	req := reqs[0]
	if res, _ := call(t, cs, "ApplyBatch", batchOf("seen")); res.ErrorCode != contract.CodeOperationRunning {
		t.Errorf("write while waiting for a decision = %s, want operation_running", res.ErrorCode)
	}

	t.Run("digest mismatch", func(t *testing.T) {
		_, err := f.ops.Operations().Decide(ctx, f.admin, "default", req.ID, contract.Decision{Digest: "sha256:00", Verdict: contract.VerdictApprove})
		if contract.CodeOf(err) != contract.CodeDigestMismatch {
			t.Errorf("Decide with another digest = %v, want digest_mismatch", err)
		}
	})
	t.Run("agents decide nothing", func(t *testing.T) {
		_, err := f.ops.Operations().Decide(ctx, f.agent, "default", req.ID, contract.Decision{Digest: req.Digest, Verdict: contract.VerdictApprove})
		if contract.CodeOf(err) != contract.CodeForbidden {
			t.Errorf("Decide by the agent = %v, want forbidden", err)
		}
	})
	t.Run("approve runs once", func(t *testing.T) {
		got, err := f.ops.Operations().Decide(ctx, f.admin, "default", req.ID, contract.Decision{Digest: req.Digest, Verdict: contract.VerdictApprove})
		if err != nil || got.State != contract.RequestApproved {
			t.Fatalf("Decide approve = %+v, %v", got, err)
		}
		if n := f.marked(t, cs); n != 1 {
			t.Errorf("marked facts after approval = %d, want 1", n)
		}
		_, err = f.ops.Operations().Decide(ctx, f.admin, "default", req.ID, contract.Decision{Digest: req.Digest, Verdict: contract.VerdictApprove})
		if contract.CodeOf(err) != contract.CodeRequestClosed {
			t.Errorf("approving again = %v, want request_closed", err)
		}
	})
	t.Run("the same call again is a new request", func(t *testing.T) {
		res, _ := call(t, cs, "ApplyAction", markCall("a"))
		if res.Operations[0].State != contract.OpWaitingForDecision {
			t.Fatalf("the same call again = %+v, want waiting_for_decision", res.Operations[0])
		}
		again := f.pending(t)
		if len(again) != 1 || again[0].ID == req.ID || again[0].Digest != req.Digest {
			t.Fatalf("pending = %+v, want one new request with the same digest", again)
		}
		if n := f.marked(t, cs); n != 1 {
			t.Errorf("marked facts before the new decision = %d, want 1", n)
		}
	})
	t.Run("denial refuses with the reason", func(t *testing.T) {
		r := f.pending(t)[0]
		if _, err := f.ops.Operations().Decide(ctx, f.admin, "default", r.ID, contract.Decision{Digest: r.Digest, Verdict: contract.VerdictDeny, Reason: "not today"}); err != nil {
			t.Fatal(err)
		}
		q, _ := call(t, cs, "QueryBoard", struct{}{})
		if e := q.Operations[0]; e.State != contract.OpRefused || !strings.Contains(e.Reason, "not today") {
			t.Errorf("operation after denial = %+v, want refused with the reason", e)
		}
	})
}

func TestGateway_TakeoverEndsHeldCall(t *testing.T) {
	f := newFixture(t, time.Minute)
	progressed := make(chan struct{}, 4)
	first := f.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		progressed <- struct{}{}
	}})
	done := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "ApplyAction", Arguments: fetchCall("a.txt")}
		params.SetProgressToken("p")
		_, err := first.CallTool(context.Background(), params)
		done <- err
	}()
	<-progressed // the call is held
	f.connect(t, nil)
	err := <-done
	if err == nil || !strings.Contains(err.Error(), contract.ReasonConnectionReplaced) {
		t.Errorf("held call on the replaced session = %v, want connection_replaced", err)
	}
}

// TestGateway_CredentialEndsHeldCall: an Agent's call held at /mcp ends, with
// credential_revoked, when the Agent's token is revoked or replaced while it waits, and
// the Agent's session ends with it (docs/security.md, "Credentials and streams").
func TestGateway_CredentialEndsHeldCall(t *testing.T) {
	cases := []struct {
		name string
		end  func(f *fixture) error
	}{
		{"agent revoked", func(f *fixture) error {
			_, err := f.a.Directory().RevokeAgent(context.Background(), f.admin, "default", "calc")
			return err
		}},
		{"agent token replaced", func(f *fixture) error {
			_, err := f.a.Directory().RotateAgentToken(context.Background(), f.admin, "default", "calc")
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, time.Hour)
			progressed := make(chan struct{}, 4)
			cs := f.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
				progressed <- struct{}{}
			}})
			done := make(chan error, 1) // written once by the calling goroutine
			go func() {
				params := &mcp.CallToolParams{Name: "ApplyAction", Arguments: fetchCall("a.txt")}
				params.SetProgressToken("p")
				_, err := cs.CallTool(t.Context(), params)
				done <- err
			}()
			<-progressed // the call is held
			if err := tc.end(f); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), string(contract.CodeCredentialRevoked)) {
					t.Errorf("held call after its token ended = %v, want credential_revoked", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the held call was still open 30s after its token ended")
			}
		})
	}
}
