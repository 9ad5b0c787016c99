package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/propagation"

	"github.com/docketrun/docket/internal/certs"
	"github.com/docketrun/docket/internal/contract"
)

// ErrUnreachable is returned, wrapped, when a /work call got no answer the worker can
// read: the authority could not be reached, failed (5xx) or answered garbage. The same
// bytes may be sent again; any other error is the authority's answer.
var ErrUnreachable = errors.New("worker: authority unreachable")

// maxAnswer bounds an answer of the authority in bytes.
const maxAnswer = 16 << 20

// Hop is the worker's client of POST /work: outbound only. It is safe
// for concurrent use.
type Hop struct {
	URL    string       // the authority's base URL, e.g. http://127.0.0.1:7420; required
	Key    string       // the Connection key; required, and never logged
	Client *http.Client // default http.DefaultClient; must not time out shorter than a long poll
}

// HopClient returns the HTTP client for a [Hop] that makes up to calls calls at once (a
// worker's parallel rows, its Poll and its lease renewal): it keeps that many idle
// connections to the authority. net/http's default client keeps two per host, so a
// worker running more rows than that closed connections and dialed new ones every round,
// paying a handshake and a fresh connection goroutine on both sides for each. Over https
// it trusts what trust does (--ca; nil: the system's roots), and a certificate it refuses
// is a tls_untrusted error naming the CA.
func HopClient(calls int, trust *certs.Trust) *http.Client {
	t := trust.Transport()
	t.MaxIdleConnsPerHost = max(calls, 2)
	t.MaxIdleConns = max(t.MaxIdleConns, t.MaxIdleConnsPerHost)
	return &http.Client{Transport: trust.Explain(t)}
}

// Answer is a decoded /work answer. Rows holds each served row's raw bytes, because a
// row is decoded on its own: one malformed row is refused without losing the others.
// Served holds the same rows decoded, each as [DecodeRow] decodes it, with its parts,
// from the answer's one parse.
type Answer struct {
	Lease  *contract.Lease
	Rows   []json.RawMessage
	Served []contract.ServedRow
}

// Body returns the bytes of one /work body. Send them with [Hop.Send]; a receipt retry
// sends the same bytes again.
//
// They are json.Marshal(contract.WorkBody{Operation: op}), written around the
// operation's own JSON: json.Marshal would read that JSON again to compact it and escape
// HTML in it, which it already is, being json.Marshal's own output. An operation that
// does not encode is left to json.Marshal, for its error.
func Body(op contract.WorkOperation) ([]byte, error) {
	inner, err := op.MarshalJSON()
	if err != nil {
		return json.Marshal(contract.WorkBody{Operation: op})
	}
	const head = `{"operation":`
	out := make([]byte, 0, len(head)+len(inner)+1)
	out = append(out, head...)
	out = append(out, inner...)
	return append(out, '}'), nil
}

// Do sends op once.
func (h *Hop) Do(ctx context.Context, op contract.WorkOperation) (Answer, error) {
	body, err := Body(op)
	if err != nil {
		return Answer{}, fmt.Errorf("work %s: %w", op.Kind, err)
	}
	return h.Send(ctx, body)
}

// Send posts body to /work. A refusal is returned as its *contract.Error; a call without
// a readable answer wraps [ErrUnreachable].
func (h *Hop) Send(ctx context.Context, body []byte) (Answer, error) {
	// The Connection key goes only to https or loopback.
	if err := contract.CheckCredentialURL(h.URL); err != nil {
		return Answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(h.URL, "/")+"/work", bytes.NewReader(body))
	if err != nil {
		return Answer{}, fmt.Errorf("work request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+h.Key)
	// The execution's trace context, when the row came with one: the hop continues it.
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	c := h.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Answer{}, context.Cause(ctx)
		}
		// A certificate the worker refuses is not a serve that is down: the same call
		// would be refused again, so the worker stops and says which CA it trusts.
		if ce, ok := errors.AsType[*contract.Error](err); ok && ce.Code == contract.CodeTLSUntrusted {
			return Answer{}, ce
		}
		return Answer{}, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	raw, err := readAnswer(resp)
	if err != nil {
		return Answer{}, fmt.Errorf("%w: read answer: %v", ErrUnreachable, err)
	}
	if resp.StatusCode >= 500 {
		// Sent again like a lost answer, but the log says what the authority said.
		if _, err := DecodeAnswer(raw); err != nil {
			if ce, ok := errors.AsType[*contract.Error](err); ok {
				return Answer{}, fmt.Errorf("%w: status %d: %s", ErrUnreachable, resp.StatusCode, ce.Error())
			}
		}
		return Answer{}, fmt.Errorf("%w: status %d", ErrUnreachable, resp.StatusCode)
	}
	return DecodeAnswer(raw)
}

// readAnswer reads resp's body, at most maxAnswer bytes, as io.ReadAll does but into a
// buffer the size its Content-Length says, where io.ReadAll grew one from 512 bytes,
// copying it each time.
func readAnswer(resp *http.Response) ([]byte, error) {
	size := int64(512)
	if resp.ContentLength >= 0 {
		size = min(resp.ContentLength, maxAnswer) + 1 // + 1: room for the read that finds the end
	}
	r := io.LimitReader(resp.Body, maxAnswer)
	b := make([]byte, 0, size)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow, as io.ReadAll does
		}
	}
}

// DecodeAnswer decodes a /work answer strictly, leaving the rows raw for
// [DecodeRow]. A refusal is returned as its *contract.Error.
func DecodeAnswer(raw []byte) (Answer, error) {
	if string(bytes.TrimRight(raw, " \t\r\n")) == acceptedAnswer {
		return Answer{}, nil
	}
	var a contract.ServedWork
	if err := contract.DecodeStrict(raw, &a); err != nil {
		return Answer{}, fmt.Errorf("%w: the answer is not a work answer: %v", ErrUnreachable, err)
	}
	if !a.Accepted {
		if a.Code == "" {
			return Answer{}, fmt.Errorf("%w: a refusal without a code", ErrUnreachable)
		}
		return Answer{}, &contract.Error{Code: a.Code, Teaching: a.Teaching}
	}
	out := Answer{Lease: a.Lease, Served: a.Rows}
	if a.Rows != nil {
		out.Rows = make([]json.RawMessage, len(a.Rows))
		for i, r := range a.Rows {
			out.Rows[i] = r.Raw
		}
	}
	return out, nil
}

// acceptedAnswer is the answer to every Claim and Report accepted, two of the three
// /work calls of an action: DecodeAnswer knows what it decodes to without parsing it.
const acceptedAnswer = `{"accepted":true}`

// DecodeRow decodes one served row; its shape is closed, so an unknown field is refused
// with work_row.
func DecodeRow(raw json.RawMessage) (contract.WorkRow, error) {
	var r contract.WorkRow
	if err := contract.DecodeStrict(raw, &r); err != nil {
		return contract.WorkRow{}, rowRefusal(err)
	}
	return r, nil
}

// rowRefusal is DecodeRow's refusal of a row DecodeStrict refused with err.
func rowRefusal(err error) error {
	if _, ok := errors.AsType[*contract.Error](err); ok {
		return err
	}
	return contract.Errorf(contract.CodeWorkRow, "a served work row is not a JSON object; the authority must serve rows as docs/workers.md describes them.")
}
