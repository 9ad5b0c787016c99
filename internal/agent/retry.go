package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// Default bounds of retrying one model request; see [RetryPolicy].
const (
	DefaultRetryAttempts = 5                // attempts of one model request, the first one included
	DefaultRetryWait     = 2 * time.Minute  // the back-off waited in all between the attempts of one request
	DefaultRetryBase     = time.Second      // the back-off before the second attempt, doubled for each one after
	DefaultRetryCap      = 30 * time.Second // the longest back-off before one attempt, unless the endpoint asks for more
)

// RetryPolicy says how a model request that failed for a reason that means "later" is
// sent again (docs/workbench.md, Model retries): a rate limit (HTTP 429), a server
// failure or overload (5xx, Anthropic's 529 and overloaded_error), a connection that
// failed before any byte of the answer, an answer stream cut before its end, and a
// request past its first-byte or idle deadline. Each retry sends the conversation as it
// stood before the failed attempt, so an answer cut mid-stream is asked for again from
// the last complete message; its partial tool calls were never sent to the gateway.
//
// The wait before attempt n+1 is the endpoint's Retry-After when it gave one, else an
// exponential back-off Base·2^(n-1) capped at Cap, of which the upper half is jitter.
// A request gives up after Attempts attempts, or when the next wait would take the
// waits of this request over MaxWait. Zero fields take the defaults.
type RetryPolicy struct {
	Attempts int           // attempts in all; 1 sends each request once; 0: DefaultRetryAttempts
	MaxWait  time.Duration // the waits of one request in all; 0: DefaultRetryWait
	Base     time.Duration // 0: DefaultRetryBase
	Cap      time.Duration // 0: DefaultRetryCap

	// Rand returns the jitter, a number in [0, 1); nil: math/rand/v2.
	Rand func() float64
	// Watch, when set, is told of each back-off wait, so that the task's lease renewal
	// says what the run waits on ("rate limited, attempt 2 of 5, next in 4 s").
	Watch *Watch
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultRetryAttempts
	}
	if p.MaxWait <= 0 {
		p.MaxWait = DefaultRetryWait
	}
	if p.Base <= 0 {
		p.Base = DefaultRetryBase
	}
	if p.Cap <= 0 {
		p.Cap = DefaultRetryCap
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	return p
}

// Validate refuses a policy that cannot work: negative bounds.
func (p RetryPolicy) Validate() error {
	if p.Attempts < 0 || p.MaxWait < 0 || p.Base < 0 || p.Cap < 0 {
		return contract.Errorf(contract.CodeModelConfig, "the model retry bounds are zero (the defaults) or positive; give --model-attempts 1 to send each request once")
	}
	return nil
}

// Backoff is the wait before attempt n+1 after attempt n failed (n from 1), without an
// endpoint's Retry-After: Base·2^(n-1) capped at Cap, its upper half scaled by jitter
// (a number in [0, 1)).
func (p RetryPolicy) Backoff(n int, jitter float64) time.Duration {
	p = p.withDefaults()
	d := p.Base
	for i := 1; i < n && d < p.Cap; i++ {
		d *= 2
	}
	d = min(d, p.Cap)
	jitter = min(max(jitter, 0), 1)
	return d/2 + time.Duration(float64(d/2)*jitter)
}

// Retry is one failed attempt of a model request that was sent again, as the
// conversation records it on the turn that followed ([Turn.Retries]): which attempt
// failed and of how many, the provider, what failed (the HTTP status when there was one)
// and how long the runtime waited before the next attempt. Its JSON form is
// [contract.ModelAttempt]'s, which the console and the CLI read.
type Retry struct {
	Attempt  int       `json:"attempt"`
	Of       int       `json:"of"`
	Provider string    `json:"provider"`
	Kind     ErrorKind `json:"kind"`
	Status   int       `json:"status,omitempty"`
	WaitMS   int64     `json:"waitMs"`
	// Asked is set when the wait was the endpoint's Retry-After.
	Asked bool `json:"asked,omitempty"`
}

// Reason says in a few words what failed: "rate limited (HTTP 429)".
func (r Retry) Reason() string {
	return RetryReason(r.Kind, r.Status)
}

// RetryReason says in a few words what failed for kind and status.
func RetryReason(kind ErrorKind, status int) string {
	return contract.ModelFailureWords(string(kind), status)
}

// WithRetries returns p sending each request again as policy says when it failed for a
// reason that means "later" ([ProviderError.Retryable]). The [Response] of a turn that
// needed retries lists them in Retries; a turn that gave up returns the last attempt's
// *[ProviderError] with every retry in its Retries. Between attempts the streamed deltas
// of the failed one are disowned with a [DeltaDiscard].
func WithRetries(p Provider, policy RetryPolicy) Provider {
	return retrying{Provider: p, policy: policy.withDefaults()}
}

type retrying struct {
	Provider
	policy RetryPolicy
}

func (r retrying) Turn(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	pol := r.policy
	var retries []Retry
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		resp, err := r.Provider.Turn(ctx, req, onDelta)
		if err == nil {
			resp.Retries = append(retries, resp.Retries...)
			return resp, nil
		}
		pe, ok := errors.AsType[*ProviderError](err)
		if !ok || !pe.Retryable() || ctx.Err() != nil {
			return resp, withRetries(err, retries)
		}
		wait, asked := pe.RetryAfter(), true
		if wait <= 0 {
			wait, asked = pol.Backoff(attempt, pol.Rand()), false
		}
		if attempt >= pol.Attempts || waited+wait > pol.MaxWait {
			return resp, withRetries(err, retries)
		}
		rt := Retry{Attempt: attempt, Of: pol.Attempts, Provider: pe.Provider, Kind: pe.Kind, Status: pe.Status, WaitMS: wait.Milliseconds(), Asked: asked}
		retries = append(retries, rt)
		if onDelta != nil {
			onDelta(Delta{Kind: DeltaDiscard, Text: rt.Reason()})
		}
		if err := pol.sleep(ctx, rt, wait); err != nil {
			return Response{}, fmt.Errorf("%s turn: wait to retry after %s: %w", pe.Provider, rt.Reason(), err)
		}
		waited += wait
	}
}

// sleep waits d before the next attempt of rt, telling the Watch; ctx's cause when it
// ends first.
func (p RetryPolicy) sleep(ctx context.Context, rt Retry, d time.Duration) error {
	now := time.Now()
	p.Watch.set(&ModelWait{Phase: contract.RunWaitRetry, Since: now, Deadline: now.Add(d),
		Attempt: rt.Attempt + 1, Attempts: rt.Of, Reason: rt.Reason()})
	defer p.Watch.set(nil)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// withRetries is err with retries noted on its *ProviderError, when it has one and there
// were any.
func withRetries(err error, retries []Retry) error {
	if len(retries) == 0 {
		return err
	}
	pe, ok := errors.AsType[*ProviderError](err)
	if !ok {
		return err
	}
	cp := *pe
	cp.Retries = retries
	return &cp
}

// retriesText says what a request's retries were, for an error: "after 3 attempts
// (rate limited (HTTP 429), …)".
func retriesText(retries []Retry) string {
	reasons := make([]string, len(retries))
	var waited time.Duration
	for i, r := range retries {
		reasons[i] = r.Reason()
		waited += time.Duration(r.WaitMS) * time.Millisecond
	}
	return fmt.Sprintf("gave up after %d attempts, %s waited between them (earlier attempts: %s)",
		len(retries)+1, waited.Round(time.Millisecond), strings.Join(reasons, ", "))
}

// maxFailedTurns bounds the model turns that gave up a conversation keeps
// ([Conversation.Failed]), and maxFailedAttempts the attempts kept of each (their own
// numbers say which): the newest are kept, so the conversation's state stays small
// whatever --model-attempts says.
const (
	maxFailedTurns    = 16
	maxFailedAttempts = 20
)

// FailedTurn is what the conversation records of a model turn that failed: when, which
// model, the request's digest, the code it failed with, and each attempt of its request
// as a [Retry] — the ones that were sent again with the wait after each, then the last,
// which gave up (WaitMS 0). A turn that succeeded after retries keeps them on its message
// instead ([Turn.Retries]); a turn that failed has no message, so the conversation keeps
// it here (docs/workbench.md, Model retries).
type FailedTurn struct {
	Model string    `json:"model"` // the provider's Name: provider and model
	At    time.Time `json:"at"`    // when it gave up
	Sent  string    `json:"sent"`  // "sha256:<hex>" of the request as JSON
	// After is how many messages the conversation held when the turn was asked: it
	// failed after message After-1 (as counted then; a compaction later shortens them).
	After    int           `json:"after"`
	Code     contract.Code `json:"code"`
	Attempts []Retry       `json:"attempts"`
}

// failedTurn is the record of a turn whose request failed with pe, as its last attempt.
func failedTurn(model string, at time.Time, sent string, after int, pe *ProviderError) FailedTurn {
	last := Retry{Attempt: len(pe.Retries) + 1, Of: len(pe.Retries) + 1, Provider: pe.Provider, Kind: pe.Kind, Status: pe.Status}
	if len(pe.Retries) > 0 {
		last.Of = pe.Retries[0].Of
	}
	attempts := append(slices.Clone(pe.Retries), last)
	if len(attempts) > maxFailedAttempts {
		attempts = attempts[len(attempts)-maxFailedAttempts:]
	}
	return FailedTurn{Model: model, At: at, Sent: sent, After: after, Code: pe.Code(), Attempts: attempts}
}

// keepFailed adds f to a conversation's failed turns, keeping the newest maxFailedTurns.
func keepFailed(fs []FailedTurn, f FailedTurn) []FailedTurn {
	fs = append(fs, f)
	if len(fs) > maxFailedTurns {
		fs = slices.Clone(fs[len(fs)-maxFailedTurns:])
	}
	return fs
}
