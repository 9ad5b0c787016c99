package debpkg_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/debpkg"
)

// fakeBinary writes an executable file standing in for the docket binary.
func fakeBinary(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "docket")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho docket test\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	bin := fakeBinary(t)
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		c    debpkg.Config
		want string // a part of the refusal, "" for none
	}{
		{"a release", debpkg.Config{Binary: bin, Version: "1.2.0", Arch: "amd64"}, ""},
		{"a build", debpkg.Config{Binary: bin, Version: "0.0.0+git3f2a9c1", Arch: "arm64"}, ""},
		{"no binary", debpkg.Config{Version: "1.2.0", Arch: "amd64"}, "go build -o docket"},
		{"a binary that is not there", debpkg.Config{Binary: bin + ".gone", Version: "1.2.0", Arch: "amd64"}, "no such file"},
		{"a binary that does not run", debpkg.Config{Binary: plain, Version: "1.2.0", Arch: "amd64"}, "not an executable"},
		{"a version with a v", debpkg.Config{Binary: bin, Version: "v1.2.0", Arch: "amd64"}, "start with a digit"},
		{"a version with a revision", debpkg.Config{Binary: bin, Version: "1.2.0-1", Arch: "amd64"}, "not a Debian version"},
		{"an arch Go names otherwise", debpkg.Config{Binary: bin, Version: "1.2.0", Arch: "x86_64"}, "amd64 or arm64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate() = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// TestBuild builds a package and reads it back with Debian's own dpkg-deb: the binary,
// the units and the defaults file at their paths and modes, the defaults file a conffile,
// the maintainer scripts that make the docket user, and the same package for the same
// inputs.
func TestBuild(t *testing.T) {
	t.Parallel()
	dpkgDeb, err := exec.LookPath("dpkg-deb")
	if err != nil {
		t.Skip("dpkg-deb is not on PATH (Debian's dpkg package provides it): the package cannot be read back here")
	}
	c := debpkg.Config{Binary: fakeBinary(t), Version: "1.2.0", Arch: "amd64", MTime: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}
	var first, second bytes.Buffer
	if err := debpkg.Build(c, &first); err != nil {
		t.Fatal(err)
	}
	if err := debpkg.Build(c, &second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Errorf("two builds of the same inputs differ")
	}
	deb := filepath.Join(t.TempDir(), "docket.deb")
	if err := os.WriteFile(deb, first.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(dpkgDeb, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("dpkg-deb %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	contents := read("--contents", deb)
	for _, want := range []string{
		"-rwxr-xr-x root/root", "./usr/bin/docket",
		"-rw-r--r-- root/root", "./lib/systemd/system/docket-serve.service",
		"./lib/systemd/system/docket-worker@.service", "./etc/default/docket",
	} {
		if !strings.Contains(contents, want) {
			t.Errorf("the package's files do not show %q:\n%s", want, contents)
		}
	}
	for field, want := range map[string]string{"Package": "docket", "Version": "1.2.0", "Architecture": "amd64", "Depends": "adduser"} {
		if got := strings.TrimSpace(read("--field", deb, field)); got != want {
			t.Errorf("control field %s = %q, want %q", field, got, want)
		}
	}
	ctl := t.TempDir()
	read("--control", deb, ctl)
	conffiles, err := os.ReadFile(filepath.Join(ctl, "conffiles"))
	if err != nil || strings.TrimSpace(string(conffiles)) != debpkg.DefaultFile {
		t.Errorf("conffiles = %q, %v; want %s, so an edit of it survives an upgrade", conffiles, err, debpkg.DefaultFile)
	}
	postinst, err := os.ReadFile(filepath.Join(ctl, "postinst"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"adduser --system", "/var/lib/docket", "chown docket:docket"} {
		if !strings.Contains(string(postinst), want) {
			t.Errorf("postinst does not %q", want)
		}
	}
	for _, script := range []string{"postinst", "prerm"} {
		if out, err := exec.Command("sh", "-n", filepath.Join(ctl, script)).CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %v\n%s", script, err, out)
		}
	}
}
