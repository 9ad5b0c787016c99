package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicy_ArtifactRetention: a member sets the project's artifact retention with
// docket policy publish; docket policy show artifact shows the built-in version (the
// server's retention) before, and the published one after; a retention out of bounds is
// refused with its file:line (docs/policies.md, docs/mcp.md).
func TestPolicy_ArtifactRetention(t *testing.T) {
	r := newDocketRig(t)
	if out, _ := r.exec(t, exitOK, nil, "policy", "show", "artifact"); !strings.Contains(out, "the server's retention") {
		t.Errorf("docket policy show artifact before any publication =\n%s\nwant the built-in version, the server's retention", out)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r.exec(t, exitOK, nil, "policy", "publish", write("artifact.toml", "[artifact_policy]\nretention_days = 7\n"))
	out, _ := r.exec(t, exitOK, nil, "policy", "show", "artifact")
	if !strings.Contains(out, "retention_days = 7") || !strings.Contains(out, "version 2") {
		t.Errorf("docket policy show artifact =\n%s\nwant version 2 with retention_days = 7", out)
	}
	_, errOut := r.exec(t, exitFailure, nil, "policy", "publish", write("long.toml", "[artifact_policy]\nretention_days = 5000\n"))
	if !strings.Contains(errOut, "long.toml:2:") || !strings.Contains(errOut, "use 1 to 3650 days") {
		t.Errorf("publishing a retention of 5000 days said %q, want long.toml:2: and the bounds", errOut)
	}
}
