package capability_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
)

// entry is one tar header and its content.
type entry struct {
	name     string
	body     string
	typeflag byte
}

// tarball builds a .tar.gz of entries in memory.
func tarball(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: e.typeflag}
		if e.typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
			h.Linkname = "target"
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// exampleFiles reads the reference capability's files.
func exampleFiles(t testing.TB) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, name := range []string{"capability.toml", "calculation.dl"} {
		b, err := os.ReadFile(filepath.Join(exampleDir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	return files
}

func TestLoadTarball(t *testing.T) {
	t.Parallel()
	dir, err := capability.Load(exampleDir)
	if err != nil {
		t.Fatal(err)
	}
	files := exampleFiles(t)
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	tests := []struct {
		name    string
		entries []entry
		code    contract.Code // "" when the tarball loads with the directory's digest
	}{
		{name: "wrapped in one directory", entries: []entry{
			{name: "calc/", typeflag: tar.TypeDir},
			{name: "calc/capability.toml", body: files["capability.toml"]},
			{name: "calc/calculation.dl", body: files["calculation.dl"]},
			{name: "calc/README.md", body: "ignored"},
		}},
		{name: "at the root with CRLF line endings", entries: []entry{
			{name: "./capability.toml", body: crlf(files["capability.toml"])},
			{name: "calculation.dl", body: crlf(files["calculation.dl"])},
		}},
		{name: "symlink refused", entries: []entry{
			{name: "capability.toml", body: files["capability.toml"]},
			{name: "calculation.dl", typeflag: tar.TypeSymlink},
		}, code: contract.CodeCapabilityInvalid},
		{name: "path leaving the package refused", entries: []entry{
			{name: "../capability.toml", body: files["capability.toml"]},
		}, code: contract.CodeCapabilityInvalid},
		{name: "no manifest", entries: []entry{
			{name: "calculation.dl", body: files["calculation.dl"]},
		}, code: contract.CodeCapabilityInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkg, err := capability.LoadTarball(bytes.NewReader(tarball(t, tt.entries...)))
			if tt.code != "" {
				if contract.CodeOf(err) != tt.code {
					t.Fatalf("LoadTarball error = %v, want code %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadTarball: %v", err)
			}
			if pkg.Release != dir.Release {
				t.Errorf("LoadTarball release = %+v, want the directory's %+v", pkg.Release, dir.Release)
			}
		})
	}
}

func TestLoadTarball_NotGzip(t *testing.T) {
	t.Parallel()
	_, err := capability.LoadTarball(strings.NewReader("plain text"))
	if contract.CodeOf(err) != contract.CodeCapabilityInvalid {
		t.Fatalf("LoadTarball(plain text) error = %v, want capability_invalid", err)
	}
}

func TestDigest(t *testing.T) {
	t.Parallel()
	base := map[string][]byte{
		"capability.toml": []byte("id = \"demo.x\"\n"),
		"rules.dl":        []byte("p(a: X) :- q(a: X).\n"),
	}
	with := func(name, body string) map[string][]byte {
		m := map[string][]byte{}
		for k, v := range base {
			m[k] = v
		}
		m[name] = []byte(body)
		return m
	}
	// The golden value pins the canonical encoding (computed with sha256sum over the bytes
	// doc.go describes): if it changes, every installed release's digest changes with it.
	const golden = "sha256:3b72d037a0d1d192edc3f354a4fde296d94d1789c054c43be5422362d7cf6d44"
	tests := []struct {
		name  string
		files map[string][]byte
		same  bool // whether the digest equals base's
	}{
		{name: "same files", files: with("rules.dl", "p(a: X) :- q(a: X).\n"), same: true},
		{name: "CRLF line endings", files: with("rules.dl", "p(a: X) :- q(a: X).\r\n"), same: true},
		{name: "ignored file added", files: with("README.md", "hello"), same: true},
		{name: "rule changed", files: with("rules.dl", "p(a: X) :- r(a: X).\n")},
		{name: "content moved between files", files: map[string][]byte{
			"capability.toml": []byte("id = \"demo.x\"\np(a: X) :- q(a: X).\n"),
			"rules.dl":        []byte(""),
		}},
		{name: "file renamed", files: map[string][]byte{
			"capability.toml": base["capability.toml"],
			"other.dl":        base["rules.dl"],
		}},
	}
	want := capability.Digest(base)
	if want != golden {
		t.Fatalf("Digest(base) = %s, want %s", want, golden)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := capability.Digest(tt.files)
			if (got == want) != tt.same {
				t.Errorf("Digest = %s, base %s; want same = %v", got, want, tt.same)
			}
		})
	}
}
