package gateway_test

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/contract"
)

// An artifact is read for as long as the retention in force when it was kept, by the Agent
// that kept it only; kept again after it expired, it is read again.
func TestGateway_ArtifactRetentionAndOwner(t *testing.T) {
	clock := authoritytest.NewClock(time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC))
	f := newConfiguredFixture(t, fixtureConfig{ops: operation.Config{HoldBound: time.Second, ArtifactRetention: time.Hour}, now: clock.Now})
	cs := f.connect(t, nil)
	put, err := f.ops.Operations().PutArtifact(t.Context(), f.agent, []byte("0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	if want := clock.Now().Add(time.Hour); !put.ExpiresAt.Equal(want) {
		t.Errorf("the artifact expires at %s, want %s", put.ExpiresAt, want)
	}
	if res, _ := call(t, cs, "ReadArtifact", contract.ReadArtifactInput{Ref: put.Ref}); res.ErrorCode != "" {
		t.Fatalf("ReadArtifact within the retention = %s %s", res.ErrorCode, res.Teaching)
	}

	other, err := f.a.Directory().CreateAgent(t.Context(), f.admin, "default", contract.CreateAgentRequest{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := call(t, f.connectAs(t, other.Token, nil), "ReadArtifact", contract.ReadArtifactInput{Ref: put.Ref}); res.ErrorCode != contract.CodeArtifactNotFound {
		t.Errorf("another Agent's ReadArtifact = %q, want %s: an artifact is its Agent's", res.ErrorCode, contract.CodeArtifactNotFound)
	}
	if _, err := f.ops.Operations().PutArtifact(t.Context(), f.admin, []byte("x")); contract.CodeOf(err) != contract.CodeForbidden {
		t.Errorf("a member's PutArtifact = %v, want %s", err, contract.CodeForbidden)
	}
	if _, err := f.ops.Operations().PutArtifact(t.Context(), f.agent, make([]byte, contract.MaxArtifactBytes+1)); contract.CodeOf(err) != contract.CodeArtifactTooLarge {
		t.Errorf("PutArtifact over the bound = %v, want %s", err, contract.CodeArtifactTooLarge)
	}

	clock.Add(time.Hour)
	if res, _ := call(t, cs, "ReadArtifact", contract.ReadArtifactInput{Ref: put.Ref}); res.ErrorCode != contract.CodeArtifactExpired {
		t.Errorf("ReadArtifact past the retention = %q, want %s", res.ErrorCode, contract.CodeArtifactExpired)
	}
	again, err := f.ops.Operations().PutArtifact(t.Context(), f.agent, []byte("0123456789"))
	if err != nil || again.Ref != put.Ref || !again.ExpiresAt.After(put.ExpiresAt) {
		t.Fatalf("PutArtifact after expiry = %+v, %v; want the same ref with a new expiry", again, err)
	}
	if res, _ := call(t, cs, "ReadArtifact", contract.ReadArtifactInput{Ref: put.Ref}); res.ErrorCode != "" {
		t.Errorf("ReadArtifact once kept again = %s %s", res.ErrorCode, res.Teaching)
	}
}
