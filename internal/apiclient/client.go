// Package apiclient provides a client of the authority's /api/v1, the one the admin verbs
// and the agent runtime share.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// MaxAnswer bounds what one decoded answer may hold, in bytes: a conversation's messages
// are bounded per save, not in all, so this is generous.
const MaxAnswer = 256 << 20

// maxRefusal bounds the body of an error answer, in bytes.
const maxRefusal = 1 << 16

// Client calls /api/v1 with a bearer token. Its zero value is not usable: URL is
// required. It is safe for concurrent use.
type Client struct {
	URL   string       // the authority's root, e.g. http://127.0.0.1:7777; required
	Token string       // the bearer token sent with every call; empty sends none
	HTTP  *http.Client // nil: http.DefaultClient
	// Reason, when set, is sent with every call in the Docket-Reason header: a delegate's
	// reason for a consent call, which its card shows the member.
	Reason string
}

// CardError is a delegate's consent call that ran nothing: the authority recorded it as
// Card, which a member confirms. It reads as the authority's card_recorded answer.
type CardError struct {
	Card contract.Card
	Err  *contract.Error
}

func (e *CardError) Error() string { return e.Err.Error() }
func (e *CardError) Unwrap() error { return e.Err }

// ResponseError is an answer outside 2xx. When the body held the authority's error, Err
// is it and the error reads as it, so [contract.CodeOf] finds its code.
type ResponseError struct {
	Method     string
	Path       string
	StatusCode int             // e.g. 401
	Status     string          // e.g. "401 Unauthorized"
	Err        *contract.Error // nil when the body held no error of the authority
}

func (e *ResponseError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("%s %s: %s", e.Method, e.Path, e.Status)
}

func (e *ResponseError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// UnreachableError is a call that got no answer: the server is down, the address is
// wrong, or ctx ended first. Err is the transport's error.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("reach docket serve at %s: %v", Origin(e.URL), e.Err)
}

// Origin returns u's scheme and host, to be shown or logged: u's path can carry docket
// start's serve key.
func Origin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "the configured URL"
	}
	return p.Scheme + "://" + p.Host
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Do sends one call and decodes a 2xx answer into out (when out is not nil and the answer
// is not 204). A refusal is a [*ResponseError]; no answer at all is an [*UnreachableError].
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.Send(ctx, method, path, in, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, MaxAnswer)).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// doOne is [Client.Do] of a request whose answer is one T: most routes' client.
func doOne[T any](ctx context.Context, c *Client, method, path string, in any) (T, error) {
	var out T
	err := c.Do(ctx, method, path, in, &out)
	return out, err
}

// Send sends one call with in as its JSON body (none when nil) and the extra header, and
// returns a 2xx response for the caller to read and close; it is for answers that are
// streams. Errors are those of [Client.Do].
func (c *Client) Send(ctx context.Context, method, path string, in any, header http.Header) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	base := strings.TrimRight(c.URL, "/")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	if c.Token != "" {
		// A credential goes only to https or loopback, redirects included.
		if err := contract.CheckCredentialURL(base); err != nil {
			return nil, err
		}
		hc = credentialClient(hc)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.Reason != "" {
		req.Header.Set(contract.ReasonHeader, c.Reason)
	}
	resp, err := hc.Do(req)
	if err != nil {
		// A refused certificate is not a serve that is down: it is said as itself, naming
		// the CA trusted (docs/deploy.md).
		if ce, ok := errors.AsType[*contract.Error](err); ok && ce.Code == contract.CodeTLSUntrusted {
			return nil, ce
		}
		return nil, &UnreachableError{URL: base, Err: err}
	}
	if resp.StatusCode == http.StatusAccepted {
		return nil, cardAnswer(resp, method, path)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	re := &ResponseError{Method: method, Path: path, StatusCode: resp.StatusCode, Status: resp.Status}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxRefusal))
	if err != nil {
		return nil, re
	}
	var ce contract.Error
	if json.Unmarshal(b, &ce) == nil && ce.Code != "" {
		re.Err = &ce
	}
	return nil, re
}

// credentialClient returns a copy of hc that refuses a redirect to a URL a credential
// may not go to ([contract.CheckCredentialURL]): net/http forwards the Authorization
// header on a redirect to the same host, an https one to plain http included.
func credentialClient(hc *http.Client) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := contract.CheckCredentialURL(req.URL.String()); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// cardAnswer reads a 202 answer: the card a delegate's consent call became.
func cardAnswer(resp *http.Response, method, path string) error {
	defer resp.Body.Close()
	var ans contract.CardAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, MaxAnswer)).Decode(&ans); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	if ans.Code != contract.CodeCardRecorded {
		return fmt.Errorf("%s %s: 202 without a card", method, path)
	}
	return &CardError{Card: ans.Card, Err: &contract.Error{Code: ans.Code, Teaching: ans.Teaching}}
}

// ProjectPath returns /api/v1/projects/<project>/<rest…>, escaping each part.
func ProjectPath(project string, rest ...string) string {
	p := "/api/v1/projects/" + url.PathEscape(project)
	for _, r := range rest {
		p += "/" + url.PathEscape(r)
	}
	return p
}
