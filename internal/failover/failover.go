// Package failover lets a client of several docket serves over one PostgreSQL database (a
// worker, an agent runtime) move to the next serve when the one it uses stops answering:
// the serves share every lease, Operation and Request through the store, so any of them
// can take the client's next call (docs/deploy.md, "PostgreSQL with several serves").
package failover

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/docketrun/docket/internal/contract"
)

// Serves is an ordered list of serve URLs and the one in use. It is safe for concurrent
// use: every request of a client goes to the serve in use, and the first request to find
// it gone moves every later one on.
type Serves struct {
	urls []*url.URL
	cur  atomic.Int64 // index into urls of the serve in use
	log  *slog.Logger
}

// Parse reads a list of serve URLs, comma separated ("https://a:7420,https://b:7420"), as
// --url and $DOCKET_URL give them. Each must be an absolute http(s) URL a credential may
// be sent to (https, or loopback: [contract.CheckCredentialURL]); all must name the same
// path (the serves mount /mcp and /work alike), and none twice.
func Parse(list string) ([]string, error) {
	var out []string
	var path string
	seen := map[string]bool{}
	for raw := range strings.SplitSeq(list, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, contract.Errorf(contract.CodeInsecureURL, "%q is not an absolute http(s) URL; give each serve as https://HOST:PORT, several separated by commas", raw)
		}
		if err := contract.CheckCredentialURL(raw); err != nil {
			return nil, err
		}
		p := strings.TrimRight(u.Path, "/")
		if len(out) > 0 && p != path {
			return nil, contract.Errorf(contract.CodeInsecureURL, "%s names the path %q and %s the path %q; every serve mounts the same paths, so give each URL the same one", out[0], path, raw, p)
		}
		key := strings.ToLower(u.Scheme + "://" + u.Host)
		if seen[key] {
			return nil, contract.Errorf(contract.CodeInsecureURL, "%s is given twice; name each serve once", u.Host)
		}
		seen[key], path = true, p
		out = append(out, raw)
	}
	if len(out) == 0 {
		return nil, contract.Errorf(contract.CodeInsecureURL, "no serve URL given; pass --url https://HOST:PORT (several separated by commas)")
	}
	return out, nil
}

// New returns the serves of urls (as [Parse] returns them), the first in use; log (nil:
// discard) says each move to another serve.
func New(urls []string, log *slog.Logger) (*Serves, error) {
	if len(urls) == 0 {
		return nil, errors.New("failover: no serve URL")
	}
	s := &Serves{log: log}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("failover: serve URL %q: not an absolute URL", raw)
		}
		s.urls = append(s.urls, u)
	}
	return s, nil
}

// First returns the first URL: the one a client names in its requests, which the
// transport sends to the serve in use.
func (s *Serves) First() string { return s.urls[0].String() }

// Len returns how many serves there are.
func (s *Serves) Len() int { return len(s.urls) }

// Current returns the origin of the serve in use.
func (s *Serves) Current() string { return origin(s.urls[s.cur.Load()]) }

// Transport returns a RoundTripper that sends each request through base to the serve in
// use, whatever host the request names. When that serve cannot be reached (the
// connection is refused, reset or cut before an answer: [Unreachable]) it moves on to the
// next serve, in order and round again. A request that never left (its connection was
// never made) is sent to the next serve at once, each serve tried once; a request that
// may have reached the serve is never sent again here: its error is returned, and the
// caller's own rules (a worker's receipt retry, a runtime's unknown outcome) decide. An
// HTTP answer, a refusal or a 5xx included, is an answer, and moves nothing. With one
// serve, base itself is returned.
func (s *Serves) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if len(s.urls) == 1 {
		return base
	}
	return &transport{s: s, base: base}
}

// Client returns c sending through [Serves.Transport] of its transport; c is changed.
func (s *Serves) Client(c *http.Client) *http.Client {
	c.Transport = s.Transport(c.Transport)
	return c
}

type transport struct {
	s    *Serves
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	n := int64(len(t.s.urls))
	start := t.s.cur.Load()
	var err error
	for i := range n {
		at := (start + i) % n
		r := req.Clone(req.Context())
		if i > 0 && req.Body != nil && req.Body != http.NoBody {
			if r.Body, err = req.GetBody(); err != nil {
				return nil, fmt.Errorf("failover: read the request body again: %w", err)
			}
		}
		u := t.s.urls[at]
		r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, ""
		var resp *http.Response
		resp, err = t.base.RoundTrip(r)
		if err == nil {
			return resp, nil
		}
		if req.Context().Err() != nil || !Unreachable(err) {
			return nil, err
		}
		t.s.moveFrom(at, err)
		resendable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		if !neverSent(err) || !resendable {
			return nil, err
		}
	}
	return nil, err
}

// moveFrom makes the serve after at the one in use, unless another request moved on from
// at already.
func (s *Serves) moveFrom(at int64, cause error) {
	next := (at + 1) % int64(len(s.urls))
	if s.cur.CompareAndSwap(at, next) {
		s.log.Warn("serve unreachable; moving to the next", "from", origin(s.urls[at]), "to", origin(s.urls[next]), "err", cause)
	}
}

// Unreachable reports whether err says the serve could not be reached or went away
// before answering: a connection refused, reset or cut, or a dial that failed. A TLS
// refusal ([contract.CodeTLSUntrusted]) is not: another serve presenting the same
// certificate would be refused again.
func Unreachable(err error) bool {
	if err == nil || contract.CodeOf(err) == contract.CodeTLSUntrusted {
		return false
	}
	if neverSent(err) {
		return true
	}
	for _, target := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE, io.EOF, io.ErrUnexpectedEOF} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// neverSent reports whether err is a failed dial: no connection was made, so the request
// reached no serve and may go to another.
func neverSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }
