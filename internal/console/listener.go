package console

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// Bounds of the listener (docs/security.md: 10,000 bodies sent one byte every 5 s once
// took serve to its fd limit, and /api/v1/health stopped answering).
const (
	DefaultHeaderTimeout = 10 * time.Second  // to read a request's headers
	DefaultBodyTimeout   = 30 * time.Second  // to read a request's whole body, from its headers
	DefaultIdleTimeout   = 120 * time.Second // a kept-alive connection with no request
	DefaultMaxConns      = 4096              // open connections, when the fd limit says nothing
	DefaultMaxStreams    = 250               // requests at once on one HTTP/2 connection
	maxHeaderBytes       = 64 << 10
)

// listenerProtocols is HTTP/1.1 and HTTP/2: over the listener's own TLS, negotiated by
// ALPN; without it, unencrypted HTTP/2 (h2c with prior knowledge): a client process that hosts many Agents carries their held /mcp
// calls as streams of one connection, where HTTP/1.1 needs a connection, its goroutines and
// its buffers per call (benchmarks/README.md; Docket's own runtime hosts one
// Agent a process and stays on HTTP/1.1, which costs serve less for one Agent). The bounds
// hold for both: the connection bound counts connections, Config.MaxStreams bounds the
// requests of each, and a stream's body has the body timeout, as a connection's does.
func listenerProtocols(overTLS bool) *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	if overTLS {
		p.SetHTTP2(true)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	return p
}

// limitListener accepts at most n open connections; Accept waits while n are open, so the
// process never runs out of file descriptors, and a waiting client is served as soon as
// a slow one is cut.
type limitListener struct {
	net.Listener
	slots  chan struct{}
	closed chan struct{}
	once   sync.Once
}

func newLimitListener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), closed: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close closes the listener and ends an Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// boundBody gives r's body until the body timeout to arrive whole, with a read deadline
// on the connection that is lifted once the body has been read to its end: a held /mcp
// call, a long /work poll and an event stream are long answers, not slow reads, and must
// not be cut. A handler that answers at length must read its body first.
func (s *Server) boundBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || s.bodyTimeout <= 0 {
		return
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)); err != nil {
		s.log.DebugContext(r.Context(), "no read deadline for the body", logPath, r.URL.Path, logErr, err)
		return
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() {
		if err := rc.SetReadDeadline(time.Time{}); err != nil {
			s.log.DebugContext(r.Context(), "lifting the body's read deadline failed", logPath, r.URL.Path, logErr, err)
		}
	}}
}

// deadlineBody lifts the body's read deadline when the body has been read whole. A body
// that fails or is left unread keeps it, so that the server, discarding the rest, cuts
// the connection rather than wait for a sender that never finishes.
type deadlineBody struct {
	io.ReadCloser
	once sync.Once
	lift func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(b.lift)
	}
	return n, err
}

// LoginLimits bound logins, as token buckets: each name gets Burst attempts, then one per
// Every; all names together get GlobalBurst, then one per GlobalEvery. Zero fields take
// the defaults: 10 and one per 6 s for a name, 60 and one per 100 ms in all.
type LoginLimits struct {
	Burst       int
	Every       time.Duration
	GlobalBurst int
	GlobalEvery time.Duration
}

// maxLoginNames bounds the names the limiter remembers; names whose bucket is full again
// are forgotten first.
const maxLoginNames = 4096

type bucket struct {
	tokens float64
	at     time.Time
}

// take takes one token from b, refilled at one per every up to burst, or says how long
// until one is there.
func (b *bucket) take(now time.Time, burst int, every time.Duration) (bool, time.Duration) {
	if b.at.IsZero() {
		b.tokens, b.at = float64(burst), now
	}
	b.tokens = min(float64(burst), b.tokens+float64(now.Sub(b.at))/float64(every))
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) * float64(every))
}

type loginLimiter struct {
	lim    LoginLimits
	now    func() time.Time
	mu     sync.Mutex
	global bucket
	names  map[string]*bucket
}

func newLoginLimiter(lim LoginLimits) *loginLimiter {
	if lim.Burst <= 0 {
		lim.Burst = 10
	}
	if lim.Every <= 0 {
		lim.Every = 6 * time.Second
	}
	if lim.GlobalBurst <= 0 {
		lim.GlobalBurst = 60
	}
	if lim.GlobalEvery <= 0 {
		lim.GlobalEvery = 100 * time.Millisecond
	}
	return &loginLimiter{lim: lim, now: time.Now, names: map[string]*bucket{}}
}

// allow takes a login attempt for name, or refuses it with rate_limited and sets
// Retry-After on w.
func (l *loginLimiter) allow(w http.ResponseWriter, name string) error {
	l.mu.Lock()
	now := l.now()
	ok, wait := l.global.take(now, l.lim.GlobalBurst, l.lim.GlobalEvery)
	if ok {
		b := l.names[name]
		if b == nil {
			l.pruneLocked(now)
			b = &bucket{}
			l.names[name] = b
		}
		ok, wait = b.take(now, l.lim.Burst, l.lim.Every)
	}
	l.mu.Unlock()
	if ok {
		return nil
	}
	secs := max(1, int((wait+time.Second-1)/time.Second))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return contract.Errorf(contract.CodeRateLimited, "too many logins; wait %d s (Retry-After) and try again.", secs)
}

func (l *loginLimiter) pruneLocked(now time.Time) {
	if len(l.names) < maxLoginNames {
		return
	}
	for name, b := range l.names {
		if b.tokens+float64(now.Sub(b.at))/float64(l.lim.Every) >= float64(l.lim.Burst) {
			delete(l.names, name)
		}
	}
	if len(l.names) >= maxLoginNames { // every name is still refilling: forget them all
		clear(l.names)
	}
}
