package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// FuzzParseRetryAfter: whatever a server sends in Retry-After, the wait is never negative
// and never over a day.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "1", "0.5", "NaN", "Inf", "-1", "1e400", "Thu, 01 Jan 2026 00:00:30 GMT", "soon"} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, h string) {
		if d := agent.ParseRetryAfter(h, now); d < 0 || d > 24*time.Hour+time.Second {
			t.Fatalf("ParseRetryAfter(%q) = %v, want 0 to a day", h, d)
		}
	})
}

func TestRetryPolicy_Backoff(t *testing.T) {
	p := agent.RetryPolicy{Base: time.Second, Cap: 8 * time.Second}
	tests := []struct {
		n      int
		jitter float64
		want   time.Duration
	}{
		{1, 0, 500 * time.Millisecond},
		{1, 0.5, 750 * time.Millisecond},
		{1, 0.999999, time.Second - time.Microsecond/2},
		{2, 0, time.Second},
		{3, 1, 4 * time.Second},
		{4, 0, 4 * time.Second},
		{5, 0, 4 * time.Second}, // capped at 8 s: its lower half
		{60, 1, 8 * time.Second},
		{3, -1, 2 * time.Second}, // jitter out of range is clamped
		{3, 2, 4 * time.Second},
	}
	for _, tt := range tests {
		got := p.Backoff(tt.n, tt.jitter)
		if d := got - tt.want; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("Backoff(%d, %v) = %v, want %v", tt.n, tt.jitter, got, tt.want)
		}
	}
	if got := (agent.RetryPolicy{}).Backoff(1, 0); got != agent.DefaultRetryBase/2 {
		t.Errorf("the default first back-off = %v, want half of %v", got, agent.DefaultRetryBase)
	}
	if err := (agent.RetryPolicy{Attempts: -1}).Validate(); contract.CodeOf(err) != contract.CodeModelConfig {
		t.Errorf("negative attempts: %v, want model_config", err)
	}
}

// flaky is a provider that fails with errs in turn, then answers.
type flaky struct {
	mu    sync.Mutex
	errs  []error
	calls int
	at    []time.Time
}

func (f *flaky) Name() string { return "flaky" }

func (f *flaky) Turn(ctx context.Context, req agent.Request, onDelta func(agent.Delta)) (agent.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.at = append(f.at, time.Now())
	if onDelta != nil {
		onDelta(agent.Delta{Kind: agent.DeltaText, Text: "partial"})
	}
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return agent.Response{}, err
	}
	return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Text: "done"}, Stop: agent.StopEnd}, nil
}

var oneTurn = agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: "go"}}}

func TestWithRetries(t *testing.T) {
	rate := func(after time.Duration) error {
		return &agent.ProviderError{Provider: "p", Kind: agent.KindRateLimit, Status: 429, After: after}
	}
	overloaded := &agent.ProviderError{Provider: "anthropic", Kind: agent.KindServer, Status: 529}
	cut := &agent.ProviderError{Provider: "p", Kind: agent.KindStream, Cut: true, Message: "the stream ended without [DONE]"}
	reset := &agent.ProviderError{Provider: "p", Kind: agent.KindTransport, Err: errors.New("connection reset by peer")}
	tests := []struct {
		name    string
		policy  agent.RetryPolicy
		errs    []error
		calls   int
		waits   []time.Duration // between the attempts
		failed  agent.ErrorKind // "": the turn answers
		retries int
	}{
		{"Retry-After is honoured", agent.RetryPolicy{}, []error{rate(4 * time.Second), rate(7 * time.Second)}, 3, []time.Duration{4 * time.Second, 7 * time.Second}, "", 2},
		{"back-off doubles with jitter when none is asked", agent.RetryPolicy{Base: 2 * time.Second}, []error{overloaded, reset, cut}, 4,
			[]time.Duration{1500 * time.Millisecond, 3 * time.Second, 6 * time.Second}, "", 3},
		{"attempts bound the retries", agent.RetryPolicy{Attempts: 3}, []error{rate(time.Second), rate(time.Second), rate(time.Second), rate(time.Second)}, 3,
			[]time.Duration{time.Second, time.Second}, agent.KindRateLimit, 2},
		{"the total wait bounds the retries", agent.RetryPolicy{MaxWait: 10 * time.Second}, []error{rate(6 * time.Second), rate(6 * time.Second)}, 2,
			[]time.Duration{6 * time.Second}, agent.KindRateLimit, 1},
		{"a refused key is not retried", agent.RetryPolicy{}, []error{&agent.ProviderError{Provider: "p", Kind: agent.KindAuth, Status: 401}}, 1, nil, agent.KindAuth, 0},
		{"a malformed answer is not retried", agent.RetryPolicy{}, []error{&agent.ProviderError{Provider: "p", Kind: agent.KindStream, Message: "a chunk is not JSON"}}, 1, nil, agent.KindStream, 0},
		{"one attempt sends once", agent.RetryPolicy{Attempts: 1}, []error{rate(time.Second)}, 1, nil, agent.KindRateLimit, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &flaky{errs: tt.errs}
				tt.policy.Rand = func() float64 { return 0.5 }
				p := agent.WithRetries(f, tt.policy)
				var discards int
				resp, err := p.Turn(t.Context(), oneTurn, func(d agent.Delta) {
					if d.Kind == agent.DeltaDiscard {
						discards++
					}
				})
				if f.calls != tt.calls {
					t.Errorf("attempts = %d, want %d", f.calls, tt.calls)
				}
				for i := 1; i < len(f.at); i++ {
					if got := f.at[i].Sub(f.at[i-1]); i-1 >= len(tt.waits) || got != tt.waits[i-1] {
						t.Errorf("wait before attempt %d = %v, want %v", i+1, got, tt.waits)
					}
				}
				var retries []agent.Retry
				if tt.failed == "" {
					if err != nil || resp.Message.Text != "done" {
						t.Fatalf("Turn = %+v, %v; want the answer", resp, err)
					}
					retries = resp.Retries
				} else {
					pe, ok := errors.AsType[*agent.ProviderError](err)
					if !ok || pe.Kind != tt.failed {
						t.Fatalf("Turn error = %v, want %s", err, tt.failed)
					}
					retries = pe.Retries
					if tt.retries > 0 && !strings.Contains(err.Error(), "gave up after") {
						t.Errorf("error %q does not say it gave up", err)
					}
				}
				if len(retries) != tt.retries || discards != tt.retries {
					t.Fatalf("retries = %+v, discards %d; want %d of each", retries, discards, tt.retries)
				}
				for i, r := range retries {
					if r.Attempt != i+1 || r.Of == 0 || r.Provider == "" || time.Duration(r.WaitMS)*time.Millisecond != tt.waits[i] {
						t.Errorf("retry %d = %+v, want attempt %d waiting %v", i, r, i+1, tt.waits[i])
					}
				}
			})
		})
	}
}

// TestWithRetries_Watch: while a request waits to be sent again, the Watch says so,
// with the attempt, the bound and the reason a person reads ("rate limited (HTTP 429),
// attempt 2 of 5 …, next in 4 s"), and signals the change; cancelling ctx ends the wait.
func TestWithRetries_Watch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &agent.Watch{}
		changed := w.Changed()
		f := &flaky{errs: []error{&agent.ProviderError{Provider: "p", Kind: agent.KindRateLimit, Status: 429, After: 4 * time.Second}}}
		p := agent.WithRetries(f, agent.RetryPolicy{Watch: w})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := p.Turn(ctx, oneTurn, nil)
			done <- err
		}()
		<-changed
		mw, ok := w.Current()
		if !ok || mw.Phase != contract.RunWaitRetry || mw.Attempt != 2 || mw.Attempts != agent.DefaultRetryAttempts || mw.Reason != "rate limited (HTTP 429)" {
			t.Fatalf("the watch = %+v, %v; want attempt 2 of %d, rate limited", mw, ok, agent.DefaultRetryAttempts)
		}
		mw.Origin = "https://api.example.com"
		rw := mw.RunWait()
		if err := contract.CheckTaskRunWait(*rw); err != nil {
			t.Fatalf("the retry wait does not pass the authority's check: %v", err)
		}
		if got, want := contract.RetryWaitText(*rw, mw.Since), "rate limited (HTTP 429), attempt 2 of 5 at https://api.example.com, next in 4 s"; got != want {
			t.Errorf("the task says %q, want %q", got, want)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Turn cancelled during its wait = %v, want context.Canceled", err)
		}
		if _, ok := w.Current(); ok || f.calls != 1 {
			t.Errorf("after the cancel the watch still waits or the request was sent again (%d attempts)", f.calls)
		}
	})
}
