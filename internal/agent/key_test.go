package agent_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

const sentinel = "sk-SENTINEL-0b5e77"

func TestKey_neverPrints(t *testing.T) {
	k := agent.NewKey(" " + sentinel + "\n")
	if k.Reveal() != sentinel {
		t.Fatalf("Reveal() = %q, want the trimmed key", k.Reveal())
	}
	holder := struct {
		Name string
		key  agent.Key
		Ptr  *agent.Key
	}{"cfg", k, &k}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "key", k, "holder", holder)
	js, _ := json.Marshal(holder)
	outs := []string{
		k.String(), fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s %q %x", k, k, k, k, k, k),
		fmt.Sprintf("%v %+v %#v", holder, holder, holder), fmt.Sprintf("%+v", &holder),
		logs.String(), string(js),
	}
	for _, s := range outs {
		if strings.Contains(s, sentinel) {
			t.Errorf("the key printed: %s", s)
		}
	}
	if got := k.Scrub("echo " + sentinel + " and " + sentinel); got != "echo [redacted] and [redacted]" {
		t.Errorf("Scrub = %q", got)
	}
	if a, b := agent.NewKey("a").String(), agent.NewKey("b").String(); a == b {
		t.Errorf("two keys print the same digest %s", a)
	}
	if !agent.NewKey("  ").IsZero() || agent.NewKey("  ").String() != "key(none)" {
		t.Errorf("a blank key is not the zero Key")
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", sentinel+"\n", 0o600)
	open := write("open", sentinel, 0o644)
	empty := write("empty", "\n", 0o600)
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == agent.KeyEnv {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name     string
		file     string
		getenv   func(string) string
		want     string
		code     contract.Code
		teaching string
	}{
		{"from the environment", "", env(sentinel), sentinel, "", ""},
		{"file wins over the environment", good, env("other"), sentinel, "", ""},
		{"neither is no key", "", env(""), "", "", ""},
		{"missing file", filepath.Join(dir, "nope"), env(""), "", contract.CodeModelConfig, "cannot be read"},
		{"file readable by others", open, env(""), "", contract.CodeModelConfig, "chmod 600"},
		{"empty file", empty, env(""), "", contract.CodeModelConfig, "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := agent.LoadKey(tt.file, tt.getenv)
			if contract.CodeOf(err) != tt.code || (err != nil && !strings.Contains(err.Error(), tt.teaching)) {
				t.Fatalf("LoadKey(%q) error = %v, want code %q saying %q", tt.file, err, tt.code, tt.teaching)
			}
			if k.Reveal() != tt.want {
				t.Errorf("LoadKey(%q) = %q, want %q", tt.file, k.Reveal(), tt.want)
			}
			if err != nil && strings.Contains(err.Error(), sentinel) {
				t.Errorf("the key leaked into the error: %v", err)
			}
		})
	}
}

func TestKey_ScrubError(t *testing.T) {
	k := agent.NewKey(sentinel)
	plain := errors.New("no key here")
	pe := &agent.ProviderError{Provider: "p", Kind: agent.KindAuth, Message: "bad " + sentinel, Err: fmt.Errorf("cause %s", sentinel)}
	tests := []struct {
		name string
		err  error
		same bool // returned unchanged
	}{
		{"nil", nil, true},
		{"no key", plain, true},
		{"holds the key", fmt.Errorf("dial: %s", sentinel), false},
		{"provider error", pe, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := k.ScrubError(tt.err)
			if tt.same && got != tt.err {
				t.Errorf("ScrubError(%v) = %v, want the same error", tt.err, got)
			}
			if got != nil && strings.Contains(got.Error(), sentinel) {
				t.Errorf("ScrubError left the key: %v", got)
			}
		})
	}
}
