package failover_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/failover"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
		code contract.Code
	}{
		{"one", "http://127.0.0.1:7420", []string{"http://127.0.0.1:7420"}, ""},
		{"several, spaces and an empty element", " https://a.example:7420, https://b.example:7420,,", []string{"https://a.example:7420", "https://b.example:7420"}, ""},
		{"the same path", "http://127.0.0.1:1/mcp,http://127.0.0.1:2/mcp/", []string{"http://127.0.0.1:1/mcp", "http://127.0.0.1:2/mcp/"}, ""},
		{"different paths", "http://127.0.0.1:1/mcp,http://127.0.0.1:2", nil, contract.CodeInsecureURL},
		{"one twice", "http://127.0.0.1:1,HTTP://127.0.0.1:1", nil, contract.CodeInsecureURL},
		{"none", " , ", nil, contract.CodeInsecureURL},
		{"not a URL", "127.0.0.1:7420", nil, contract.CodeInsecureURL},
		{"in the clear beyond loopback", "http://127.0.0.1:1,http://docket.example:7420", nil, contract.CodeInsecureURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := failover.Parse(tt.in)
			if contract.CodeOf(err) != tt.code || (tt.code != "" && err == nil) {
				t.Fatalf("Parse(%q) = %v, %v; want code %q", tt.in, got, err, tt.code)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// deadURL returns a loopback URL nothing listens on: a dial to it is refused.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// TestTransport: a request the serve in use refuses to connect goes to the next serve at
// once, body and all, and later requests go there first; a request cut after it reached a
// serve is never sent again, but the next request goes to the next serve; an HTTP answer,
// a 5xx included, moves nothing.
func TestTransport(t *testing.T) {
	var bodies atomic.Value
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies.Store(string(b))
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "live "+r.URL.Path)
	}))
	defer live.Close()
	var cutCalls atomic.Int64
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cutCalls.Add(1)
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close() // the serve dies with the request read and no answer sent
		}
	}))
	defer cut.Close()

	t.Run("refused: sent to the next at once", func(t *testing.T) {
		urls, err := failover.Parse(deadURL(t) + "," + live.URL)
		if err != nil {
			t.Fatal(err)
		}
		s, err := failover.New(urls, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Transport: s.Transport(nil)}
		for range 2 {
			resp, err := c.Post(s.First()+"/work", "text/plain", bytes.NewReader([]byte("the body")))
			if err != nil {
				t.Fatalf("Post: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "live /work" || bodies.Load() != "the body" {
				t.Errorf("answer %q, body %q; want the live serve's answer to the whole body", b, bodies.Load())
			}
		}
		if s.Current() != live.URL {
			t.Errorf("serve in use = %s, want %s", s.Current(), live.URL)
		}
	})
	t.Run("cut after it was sent: not sent again, the next request moves on", func(t *testing.T) {
		s, err := failover.New([]string{cut.URL, live.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Transport: s.Transport(&http.Transport{DisableKeepAlives: true})}
		if _, err := c.Post(s.First()+"/mcp", "text/plain", strings.NewReader("call")); err == nil || !failover.Unreachable(err) {
			t.Fatalf("Post to a serve that died mid-request = %v, want an unreachable error", err)
		}
		if n := cutCalls.Load(); n != 1 {
			t.Errorf("the cut serve received %d requests, want 1 (never sent again)", n)
		}
		resp, err := c.Get(s.First() + "/mcp")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if s.Current() != live.URL || cutCalls.Load() != 1 {
			t.Errorf("after the cut, serve in use %s and %d requests to the cut one; want %s and 1", s.Current(), cutCalls.Load(), live.URL)
		}
	})
	t.Run("an HTTP answer moves nothing", func(t *testing.T) {
		s, err := failover.New([]string{live.URL, deadURL(t)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Transport: s.Transport(nil)}
		resp, err := c.Get(s.First() + "/fail")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError || s.Current() != live.URL {
			t.Errorf("status %d, serve in use %s; want 500 and %s kept", resp.StatusCode, s.Current(), live.URL)
		}
	})
	t.Run("every serve refused", func(t *testing.T) {
		s, err := failover.New([]string{deadURL(t), deadURL(t)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Transport: s.Transport(nil)}
		if _, err := c.Get(s.First() + "/work"); !failover.Unreachable(err) {
			t.Errorf("Get with every serve down = %v, want an unreachable error", err)
		}
	})
}
