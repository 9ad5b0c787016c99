package agent

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// ErrorKind says what failed when a model endpoint failed.
type ErrorKind string

// Error kinds, normalised across providers.
const (
	KindAuth          ErrorKind = "auth"           // the key was refused (HTTP 401, 403)
	KindRateLimit     ErrorKind = "rate_limit"     // slow down (HTTP 429); see RetryAfter
	KindQuota         ErrorKind = "quota"          // the account has no quota left; waiting will not help
	KindContextLength ErrorKind = "context_length" // the conversation is too long for the model
	KindBadRequest    ErrorKind = "bad_request"    // the endpoint refused the request for another reason
	KindServer        ErrorKind = "server"         // the endpoint failed or is overloaded (HTTP 5xx, 529)
	KindTransport     ErrorKind = "transport"      // no HTTP answer at all: DNS, connect, reset
	KindStream        ErrorKind = "stream"         // the answer stream was truncated or malformed
	KindReply         ErrorKind = "reply"          // an emulated model kept answering outside its format
	KindStalled       ErrorKind = "stalled"        // no first byte, or no more data, within the request's deadline
)

// ProviderError is a failure of a model endpoint. Message is the endpoint's own sentence,
// with the key scrubbed out; Err is the underlying cause, if any. Neither ever holds the key.
type ProviderError struct {
	Provider string        // e.g. "anthropic"
	Kind     ErrorKind     // what failed
	Status   int           // the HTTP status, 0 when there was none
	After    time.Duration // how long the endpoint asked us to wait; 0 when it did not say
	Message  string        // the endpoint's explanation, scrubbed; may be empty
	Err      error         // the cause, scrubbed; may be nil

	// Usage is what was spent before the failure, when anything was: the attempts of an
	// emulated turn whose repairs ran out. Count it against the run's budget.
	Usage Usage

	// Cut marks a [KindStream] failure where the answer stopped before its end (the
	// connection closed or failed mid-stream), as opposed to an answer that arrived
	// malformed: a cut answer is asked for again ([ProviderError.Retryable]).
	Cut bool
	// Retries are the earlier attempts of the same request that failed and were sent
	// again ([WithRetries]); empty when this was the only attempt.
	Retries []Retry
}

func (e *ProviderError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Provider, e.Kind)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.After > 0 {
		fmt.Fprintf(&b, "; retry after %s", e.After)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if len(e.Retries) > 0 {
		b.WriteString("; ")
		b.WriteString(retriesText(e.Retries))
	}
	return b.String()
}

func (e *ProviderError) Unwrap() error { return e.Err }

// Retryable reports whether sending the same turn again may succeed: after a rate limit,
// a server failure or overload, a transport failure before any byte of the answer, an
// answer cut mid-stream ([ProviderError.Cut]), or a request past its deadline. A turn is
// sent again whole from the last complete message, so nothing of a cut answer (its tool
// calls least of all) was acted on. An answer that arrived malformed, a refused key, an
// exhausted quota or a refused request is not retried: sending it again gives the same.
func (e *ProviderError) Retryable() bool {
	switch e.Kind {
	case KindRateLimit, KindServer, KindTransport, KindStalled:
		return true
	case KindStream:
		return e.Cut
	}
	return false
}

// RetryAfter is how long to wait before retrying, as the endpoint asked; 0 when it did not
// say or the error is not [ProviderError.Retryable].
func (e *ProviderError) RetryAfter() time.Duration {
	if !e.Retryable() {
		return 0
	}
	return e.After
}

// Code is the stable code under which this failure leaves the process.
func (e *ProviderError) Code() contract.Code {
	switch e.Kind {
	case KindAuth:
		return contract.CodeModelAuth
	case KindRateLimit:
		return contract.CodeModelRateLimited
	case KindQuota:
		return contract.CodeModelQuota
	case KindContextLength:
		return contract.CodeModelContextLength
	case KindBadRequest:
		return contract.CodeModelBadRequest
	case KindServer:
		return contract.CodeModelServer
	case KindTransport:
		return contract.CodeModelTransport
	case KindStream:
		return contract.CodeModelStream
	case KindReply:
		return contract.CodeModelReply
	case KindStalled:
		return contract.CodeModelStalled
	}
	return contract.CodeInternal
}

// KindOfStatus maps an HTTP status with no finer information to an [ErrorKind].
func KindOfStatus(status int) ErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return KindAuth
	case status == http.StatusTooManyRequests:
		return KindRateLimit
	case status == http.StatusRequestEntityTooLarge:
		return KindContextLength
	case status >= 500:
		return KindServer
	}
	return KindBadRequest
}

// ParseRetryAfter reads a Retry-After header: delay seconds or an HTTP date, measured from
// now. It returns 0 for an empty, malformed or past value.
func ParseRetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil {
		if !(s > 0 && s <= 24*3600) { // NaN, too, is no delay
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
