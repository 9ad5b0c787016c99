package operation

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/docketrun/docket/internal/grant"
)

// TestDigestMemo_ComputesOnce checks that a row shaped again (a Claim's shape after its
// Poll's) takes the request digest remembered, which is the one grant.RequestDigest
// computes, and that other bytes, an error and a full memo compute anew.
func TestDigestMemo_ComputesOnce(t *testing.T) {
	t.Parallel()
	m := newDigestMemo()
	calls := 0
	m.compute = func(a, tg, s json.RawMessage) (string, error) {
		calls++
		return grant.RequestDigest(a, tg, s)
	}
	args, target := json.RawMessage(`{"path":"data/input.json"}`), json.RawMessage(`{"source":"","sourceType":"","sourceDigest":""}`)
	spec := json.RawMessage(`{"tool":"docket.workspace.read_json@1","digest":"sha256:aa","kind":"read"}`)
	want, err := grant.RequestDigest(args, target, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name               string
		args, target, spec json.RawMessage
		want               string
		calls              int
	}{
		{"first shape", args, target, spec, want, 1},
		{"shaped again", args, target, spec, want, 1},
		{"shaped again, fresh bytes", json.RawMessage(string(args)), json.RawMessage(string(target)), json.RawMessage(string(spec)), want, 1},
		{"other args", json.RawMessage(`{"path":"data/other.json"}`), target, spec, "", 2},
		{"bytes moved between parts", json.RawMessage(`{"path":"data/input.json"}`), json.RawMessage(`{"source":"","sourceType":"","sourceDigest":""}`), json.RawMessage(`{"tool":"docket.workspace.read_json@1","digest":"sha256:ab","kind":"read"}`), "", 3},
	} {
		got, err := m.digest(step.args, step.target, step.spec)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if step.want != "" && got != step.want {
			t.Fatalf("%s: digest %s, want %s", step.name, got, step.want)
		}
		if fresh, _ := grant.RequestDigest(step.args, step.target, step.spec); got != fresh {
			t.Fatalf("%s: digest %s, computed afresh %s", step.name, got, fresh)
		}
		if calls != step.calls {
			t.Fatalf("%s: computed %d times, want %d", step.name, calls, step.calls)
		}
	}

	// An error is never remembered.
	fail := errors.New("broken")
	m.compute = func(json.RawMessage, json.RawMessage, json.RawMessage) (string, error) { calls++; return "", fail }
	for range 2 {
		if _, err := m.digest(json.RawMessage(`1`), target, spec); !errors.Is(err, fail) {
			t.Fatalf("digest with a failing compute = %v, want %v", err, fail)
		}
	}
	if calls != 5 {
		t.Fatalf("a failing compute ran %d times in all, want 5 (never remembered)", calls)
	}

	// The memo stays bounded.
	m.compute = grant.RequestDigest
	for i := range 3 * maxMemoDigests {
		if _, err := m.digest(json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), target, spec); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.byIn.Len(); n > maxMemoDigests {
		t.Fatalf("the memo holds %d digests, want at most %d", n, maxMemoDigests)
	}
}
