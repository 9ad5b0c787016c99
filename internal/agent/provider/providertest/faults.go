package providertest

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/docketrun/docket/internal/agent"
)

// Option configures a server: the faults it injects and what it requires of requests.
type Option func(*options)

type options struct {
	faults    Faults
	reasoning bool
}

// Faults say which requests a server answers badly, as real model servers do, so that a
// runtime's retries and deadlines are tested against the wire: each fraction is the
// share of requests answered so. Which request gets which fault is decided by Seed and
// the request itself (its body, and how many times that body came before), never by
// arrival order: a run is repeatable even when several runtimes share the server, and
// the same request sent again draws again, so a retried request gets through.
type Faults struct {
	Seed uint64

	// RateLimit: answer 429 with Retry-After (RetryAfter, in seconds; 1 s when zero).
	RateLimit  float64
	RetryAfter time.Duration
	// Overloaded: answer as an overloaded server (Anthropic 529 overloaded_error; Chat
	// Completions 503).
	Overloaded float64
	// Stall: send the answer's headers and first event, then nothing until the client
	// gives up (its idle deadline) or the test ends.
	Stall float64
	// Cut: send the first part of the answer, then drop the connection mid-stream.
	Cut float64
	// FirstOnly draws a fault for a request's first attempt only: the same request sent
	// again is answered, so a test knows each retry succeeds.
	FirstOnly bool
}

// WithFaults makes the server inject f.
func WithFaults(f Faults) Option { return func(o *options) { o.faults = f } }

// WithReasoning makes the server answer as a reasoning model does, and require what such
// a provider requires: each answer carries reasoning (Chat Completions'
// reasoning_content; a Messages thinking block with its signature) that is not the
// answer, and a request whose conversation holds an assistant message with tool calls is
// refused (400, as DeepSeek and Anthropic refuse it) unless that message carries back the
// reasoning the server gave with it, unchanged.
func WithReasoning() Option { return func(o *options) { o.reasoning = true } }

// Reasoning is the reasoning a server gave with one answer.
type Reasoning struct {
	Text      string
	Signature string // Messages only
}

// Stats counts what a server did, for a soak test to check against what its runtimes
// saw.
type Stats struct {
	Requests        int // requests answered, faults included
	RateLimited     int
	Overloaded      int
	Stalled         int
	Cut             int
	ReasoningRefuse int // requests refused for reasoning not sent back
}

// Stats returns what the server did so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// fault is one fault a request draws.
type fault int

const (
	faultNone fault = iota
	faultRateLimit
	faultOverloaded
	faultStall
	faultCut
)

// draw decides the fault of one request with body, and counts it.
func (s *Server) draw(body []byte) fault {
	sum := sha256.Sum256(body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests++
	n := s.attempts[sum]
	s.attempts[sum] = n + 1
	f := s.opts.faults
	if f.RateLimit+f.Overloaded+f.Stall+f.Cut == 0 || (f.FirstOnly && n > 0) {
		return faultNone
	}
	r := rand.New(rand.NewPCG(f.Seed, binary.BigEndian.Uint64(sum[:8])^uint64(n)))
	u := r.Float64()
	for _, c := range []struct {
		p     float64
		f     fault
		count *int
	}{{f.RateLimit, faultRateLimit, &s.stats.RateLimited}, {f.Overloaded, faultOverloaded, &s.stats.Overloaded},
		{f.Stall, faultStall, &s.stats.Stalled}, {f.Cut, faultCut, &s.stats.Cut}} {
		if u < c.p {
			*c.count++
			return c.f
		}
		u -= c.p
	}
	return faultNone
}

// retryAfter is the Retry-After header value of a rate-limited answer.
func (s *Server) retryAfter() string {
	d := s.opts.faults.RetryAfter
	if d <= 0 {
		d = time.Second
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// stall holds an answer whose headers and first event are sent until the client goes
// away or the test ends.
func (s *Server) stall(r *http.Request) {
	select {
	case <-s.release:
	case <-r.Context().Done():
	}
}

// cut drops the connection of an answer mid-stream: no terminating chunk, as a proxy or a
// crashed server leaves it.
func cut() {
	panic(http.ErrAbortHandler)
}

// remember notes the reasoning given with the tool calls of an answer.
func (s *Server) remember(ids []string, r Reasoning) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		s.reasoned[id] = r
	}
}

// checkReasoning refuses an assistant message with tool calls whose reasoning is not what
// the server gave with them; nil when it is, or when the server does not require it.
func (s *Server) checkReasoning(index int, ids []string, got Reasoning) error {
	if !s.opts.reasoning || len(ids) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want, ok := s.reasoned[ids[0]]
	if !ok || got != want {
		s.stats.ReasoningRefuse++
		return fmt.Errorf("the assistant message at index %d has tool calls without the reasoning given with them; send it back unchanged with the next request", index)
	}
	return nil
}

// reasoningFor is the reasoning of a server answer: deterministic, and plainly not an
// answer, so that a test can look for it where it must never be.
func reasoningFor(turn int, calls []string) Reasoning {
	text := fmt.Sprintf("REASONING-%d: the model thinks before it calls %v", turn, calls)
	sum := sha256.Sum256([]byte("providertest-signature:" + text))
	return Reasoning{Text: text, Signature: fmt.Sprintf("sig-%x", sum[:12])}
}

func countAssistant(msgs []agent.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == agent.RoleAssistant {
			n++
		}
	}
	return n
}
