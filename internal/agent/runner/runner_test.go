package runner

import (
	"errors"
	"testing"
)

func TestAPIRoot(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:7777/mcp":        "http://127.0.0.1:7777",
		"http://127.0.0.1:7777/mcp/":       "http://127.0.0.1:7777",
		"https://h.example/docket/mcp?x=1": "https://h.example/docket",
	} {
		if got, err := apiRoot(in); err != nil || got != want {
			t.Errorf("apiRoot(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := apiRoot("/mcp")
	if re, ok := errors.AsType[*Error](err); !ok || re.Kind != KindUsage {
		t.Errorf("apiRoot of a relative URL = %v; want a usage error", err)
	}
}

func TestCheckTaskListen(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:0": true, "[::1]:9": true, "0.0.0.0:80": false, "localhost:1": false, "nohost": false} {
		if err := CheckTaskListen(addr); (err == nil) != ok {
			t.Errorf("CheckTaskListen(%q) = %v; want ok %v", addr, err, ok)
		}
	}
}

func TestClip(t *testing.T) {
	if got := Clip("a\n  b   c", 10); got != "a b c" {
		t.Errorf("Clip = %q", got)
	}
	if got := Clip("αβγδ", 2); got != "αβ…" {
		t.Errorf("Clip = %q", got)
	}
}
