package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// TestServe_SlowBodiesAndSessions attacks a real docket serve the way a red team once
// found it broken (docs/security.md, the listener's bounds): thousands of POST
// /api/v1/sessions whose bodies dribble in a byte at a time, beside hundreds of open MCP
// sessions, once with the connection bound sized from
// the open-file limit and once with a bound far below the load. A normal request
// (/api/v1/health) must still be answered, within a generous bound; the figures are
// logged for benchmarks/README.md.
func TestServe_SlowBodiesAndSessions(t *testing.T) {
	bin := docketBinary(t) // it opens thousands of connections to a serve process
	// This process holds one descriptor per slow connection and so does serve: size the
	// load from the open-file limit, leaving room for everything else.
	limit := fdLimit()
	slow := min(4000, (limit-512)/2)
	if slow < 200 {
		t.Skipf("the open-file limit %d is too low for the load", limit)
	}
	home := filepath.Join(t.TempDir(), "home")
	e, out := testEnv(map[string]string{"DOCKET_HOME": home, "DOCKET_PASSPHRASE": "correct horse battery"})
	if err := run(t.Context(), []string{"init"}, e); err != nil {
		t.Fatalf("docket init: %v\n%s", err, out)
	}
	const bodyTimeout = 3 * time.Second

	t.Run("bound from the open-file limit", func(t *testing.T) {
		srv := startServe(t, bin, home, "--body-timeout", bodyTimeout.String())
		defer srv.stop(t)
		cl := waitClient(t, e)
		base := cl.api.URL
		before := rssKB(t, srv.cmd.Process.Pid)

		const sessions = 300
		for i := range sessions {
			var at contract.AgentToken
			if err := cl.do(t.Context(), http.MethodPost, projectPath("default", "agents"), contract.CreateAgentRequest{Name: fmt.Sprintf("a%d", i)}, &at); err != nil {
				t.Fatalf("create agent %d: %v", i, err)
			}
			initialize(t, base, at.Token)
		}
		withSessions := rssKB(t, srv.cmd.Process.Pid)

		held := openSlow(t, base, slow)
		defer held.close()
		start := time.Now()
		health(t, base, 60*time.Second)
		answered := time.Since(start)
		withSlow := rssKB(t, srv.cmd.Process.Pid)
		// Every slow body is cut at the body timeout; none is held for as long as its
		// sender likes.
		cut := held.waitCut(bodyTimeout + 30*time.Second)
		t.Logf("FIGURES answered=%d closed=%d", held.answered, held.closed)
		t.Logf("FIGURES fd-limit=%d slow-bodies=%d held-at-health=%d health=%v cut-after-deadline=%d/%d "+
			"rss-before=%dKB rss-with-%d-mcp-sessions=%dKB (%.1f KB/session) rss-with-slow-bodies=%dKB (%.1f KB/connection)",
			limit, slow, held.n, answered.Round(time.Millisecond), cut, slow,
			before, sessions, withSessions, float64(withSessions-before)/sessions, withSlow, float64(withSlow-withSessions)/float64(slow))
		if cut != slow {
			t.Errorf("%d of %d slow bodies were still held %v after the body timeout", slow-cut, slow, 30*time.Second)
		}
	})

	t.Run("bound far below the load", func(t *testing.T) {
		const bound = 100
		srv := startServe(t, bin, home, "--body-timeout", bodyTimeout.String(), "--max-connections", strconv.Itoa(bound))
		defer srv.stop(t)
		cl := waitClient(t, e)
		n := min(slow, 10*bound)
		held := openSlow(t, cl.api.URL, n)
		defer held.close()
		start := time.Now()
		health(t, cl.api.URL, 120*time.Second)
		t.Logf("FIGURES max-connections=%d slow-bodies=%d health=%v", bound, n, time.Since(start).Round(time.Millisecond))
	})
}

// initialize opens one MCP session of the agent with token and leaves it open.
func initialize(t *testing.T, base, token string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+contract.ProtocolVersion+`","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize = %d, want 200 with a session", resp.StatusCode)
	}
}

// health asks for /api/v1/health on a new connection and fails unless it is answered 200
// within bound.
func health(t *testing.T, base string, bound time.Duration) {
	t.Helper()
	hc := &http.Client{Timeout: bound, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get(base + "/api/v1/health")
	if err != nil {
		t.Fatalf("health under load: %v", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health under load = %d, want 200", resp.StatusCode)
	}
}

// slowConns are connections that each sent a login's headers and the first byte of a
// 4 KiB body, and then one byte a second.
type slowConns struct {
	n     int
	mu    sync.Mutex
	conns []net.Conn
	cut   []bool
	// how the server ended them: an answer (400, the body refused), or a close
	answered, closed int
	stop             chan struct{}
	done             chan struct{}
}

func openSlow(t *testing.T, base string, n int) *slowConns {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	addr, path, _ := strings.Cut(addr, "/")
	if path != "" {
		path = "/" + path
	}
	s := &slowConns{stop: make(chan struct{}), done: make(chan struct{})}
	head := fmt.Sprintf("POST %s/api/v1/sessions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{", path, addr)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("open slow connection %d of %d: %v", len(s.conns)+1, n, err)
		}
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatalf("write slow headers: %v", err)
		}
		s.conns = append(s.conns, c)
	}
	s.n = len(s.conns)
	s.cut = make([]bool, s.n)
	for i := range s.conns {
		go s.watch(i)
	}
	go s.dribble()
	return s
}

// watch marks connection i cut when the server answers or closes it.
func (s *slowConns) watch(i int) {
	buf := make([]byte, 512)
	n, err := s.conns[i].Read(buf) // an answer (the body refused) or the end of the connection
	s.mu.Lock()
	s.cut[i] = true
	if n > 0 {
		s.answered++
	} else if err != nil {
		s.closed++
	}
	s.mu.Unlock()
}

// dribble writes one byte a second to every connection not yet cut.
func (s *slowConns) dribble() {
	defer close(s.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		for i, c := range s.conns {
			s.mu.Lock()
			gone := s.cut[i]
			s.mu.Unlock()
			if gone {
				continue
			}
			if _, err := c.Write([]byte(" ")); err != nil {
				s.mu.Lock()
				s.cut[i] = true
				s.mu.Unlock()
			}
		}
	}
}

// waitCut waits up to bound for every connection to be cut and returns how many were.
func (s *slowConns) waitCut(bound time.Duration) int {
	deadline := time.Now().Add(bound)
	for {
		s.mu.Lock()
		n := 0
		for _, c := range s.cut {
			if c {
				n++
			}
		}
		s.mu.Unlock()
		if n == s.n || time.Now().After(deadline) {
			return n
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *slowConns) close() {
	close(s.stop)
	<-s.done
	for _, c := range s.conns {
		c.Close()
	}
}

// rssKB returns the resident memory of process pid in KiB, from /proc; 0 where there is
// no /proc.
func rssKB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return n
		}
	}
	return 0
}
