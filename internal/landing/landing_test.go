package landing_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/landing"
)

// TestCheck: a path lands plainly inside its root only when, as written, it is relative,
// has no ".." segment, passes no symbolic link and names no file with a second hard link;
// real links in a temporary root (docs/security.md).
func TestCheck(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	for _, f := range []string{filepath.Join(root, "docs", "a.md"), filepath.Join(outside, "secret.txt")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(root, "docs", "linked.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "docs", "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.md", filepath.Join(root, "docs", "in.md")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		why        string // a word of the finding; "" is plain
	}{
		{"a plain file", "docs/a.md", ""},
		{"a file not there yet", "docs/new/b.md", ""},
		{"a dot segment", "docs/./a.md", ""},
		{"a second hard link", "docs/linked.md", "2 hard links"},
		{"a link out on the way", "docs/evil/secret.txt", "symbolic link"},
		{"a link that stays inside", "docs/in.md", "symbolic link"},
		{"dot-dot through a link out, judged as written", "docs/evil/../secret.txt", "climbs out"},
		{"dot-dot that stays inside", "docs/../docs/a.md", "climbs out"},
		{"absolute", "/etc/passwd", "absolute"},
		{"empty", "", "empty"},
		{"a backslash", `docs\a.md`, "absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := landing.Check(root, tt.path)
			if tt.why == "" && got != "" || !strings.Contains(got, tt.why) {
				t.Errorf("Check(%q) = %q, want %q", tt.path, got, tt.why)
			}
		})
	}
	if got := landing.Check(filepath.Join(root, "nothing"), "docs/a.md"); got == "" {
		t.Error("Check under a root that cannot be opened passed the path")
	}
}

func TestCredential(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want bool
	}{
		{"server.pem", true}, {"SERVER.PEM", true}, {"Deploy.KEY", true}, {"id_ed25519", true}, {"ID_RSA", true},
		{"cert.p12", true}, {"a.pfx", true}, {"main.go", false}, {"keys.md", false}, {"identity", false},
		{"id_rsa_work", true}, {"id_gen.go", false}, {"ID_TEST.GO", false}, {"id_ed25519.pub", false},
	}
	for _, tt := range tests {
		if got := landing.Credential(tt.name); got != tt.want {
			t.Errorf("Credential(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
