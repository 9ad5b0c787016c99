package authority_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// agentAt proves tok on a's Directory as every MCP request does (identity's AgentAt),
// failing the test when no answer comes within a few seconds (the proof waits for a
// lock a paused write holds).
func agentAt(t *testing.T, a *authority.Authority, tok identity.Token) (identity.Caller, error) {
	t.Helper()
	return answerWithin(t, "AgentAt", func() (identity.Caller, error) {
		c, _, err := a.Directory().AgentAt(context.Background(), tok)
		return c, err
	})
}

// TestDirectory_AgentAtDuringClaim shows that an Agent token's proof does not wait for
// a claim that holds the project's log across its store transaction: the log of
// credential events is a part of the project log the operation ledger joins, and the
// proof answers from its published state, which covers the head the proof read
// (docs/architecture.md, "The project state and its driver").
func TestDirectory_AgentAtDuringClaim(t *testing.T) {
	ps := pausedSQLite(t)
	f := newHopFixtureOn(t, opsFixtureOver(t, ps, time.Millisecond))
	at, err := f.a.Directory().CreateAgent(t.Context(), f.admin, "default", contract.CreateAgentRequest{Name: "prover"})
	if err != nil {
		t.Fatal(err)
	}
	tok := identity.Token(at.Token)
	if _, err := agentAt(t, f.a, tok); err != nil { // the token is proved once by its row, and remembered
		t.Fatalf("AgentAt: %v", err)
	}
	l, row := servedFetch(t, f)

	release, claimed := startPaused(t, ps, func() error { return f.claim(l, row) })
	c, err := agentAt(t, f.a, tok)
	release()
	if err != nil || c.ID != string(at.Agent.ID) {
		t.Errorf("AgentAt during the claim's transaction = %q, %v; want agent %s", c.ID, err, at.Agent.ID)
	}
	if err := <-claimed; err != nil {
		t.Fatalf("Claim: %v", err)
	}
}

// TestDirectory_AgentAtNotStale shows that the published state of the credential
// events never answers past the head a proof read: once another instance over the same
// store replaces an Agent's token or revokes an Agent, this instance, whose published
// state stands before that event, refuses the old token at its next proof, on both
// backends.
func TestDirectory_AgentAtNotStale(t *testing.T) {
	for _, be := range sharedBackends {
		t.Run(be.name, func(t *testing.T) {
			f, other := twoInstances(t, be.open)
			ctx := t.Context()
			for i, tc := range []struct {
				name string
				end  func(agent string) error
				want contract.Code
			}{
				{"token replaced", func(agent string) error {
					_, err := other.Directory().RotateAgentToken(ctx, f.admin, "default", agent)
					return err
				}, contract.CodeUnauthenticated},
				{"agent revoked", func(agent string) error {
					_, err := other.Directory().RevokeAgent(ctx, f.admin, "default", agent)
					return err
				}, contract.CodeCredentialRevoked},
			} {
				at, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "prover-" + strconv.Itoa(i)})
				if err != nil {
					t.Fatal(err)
				}
				tok := identity.Token(at.Token)
				for range 2 { // proved by its row, then again from the published state
					if _, err := agentAt(t, f.a, tok); err != nil {
						t.Fatalf("%s: AgentAt: %v", tc.name, err)
					}
				}
				if err := tc.end(string(at.Agent.ID)); err != nil {
					t.Fatalf("%s: the other instance: %v", tc.name, err)
				}
				_, err = agentAt(t, f.a, tok)
				var ce *contract.Error
				if !errors.As(err, &ce) || ce.Code != tc.want {
					t.Errorf("%s: AgentAt after another instance ended the token = %v, want %s", tc.name, err, tc.want)
				}
			}
		})
	}
}
