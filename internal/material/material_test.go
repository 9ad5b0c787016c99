package material_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/material"
)

func code(err error) contract.Code {
	if e, ok := errors.AsType[*contract.Error](err); ok {
		return e.Code
	}
	return ""
}

func TestPutAndReadText(t *testing.T) {
	a := material.Area{Dir: filepath.Join(t.TempDir(), "materials")}
	m, err := a.Put("notes.txt", strings.NewReader("héllo, world"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "notes.txt" || m.Size != 13 || m.MediaType != "text/plain" || !strings.HasPrefix(m.SHA256, "sha256:") {
		t.Errorf("Put = %+v", m)
	}
	hex := strings.TrimPrefix(m.SHA256, "sha256:")
	fi, err := os.Stat(filepath.Join(a.Dir, hex))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the material file: %v, %v; want mode 0600", fi, err)
	}
	if di, err := os.Stat(a.Dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("the area: %v, %v; want mode 0700", di, err)
	}
	// A read that would end inside "é" ends before it.
	got, err := a.ReadText(m.SHA256, 0, 2)
	if err != nil || got.Text != "h" || !got.Truncated {
		t.Errorf("ReadText(0, 2) = %+v, %v; want h, truncated", got, err)
	}
	got, err = a.ReadText(m.SHA256, 1, 0)
	if err != nil || got.Text != "éllo, world" || got.Truncated {
		t.Errorf("ReadText(1) = %+v, %v", got, err)
	}
	// Changed on disk: refused.
	if err := os.WriteFile(filepath.Join(a.Dir, hex), []byte("other"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ReadText(m.SHA256, 0, 0); code(err) != contract.CodeMaterialNotFound {
		t.Errorf("ReadText of a changed file = %v, want material_not_found", err)
	}
}

func TestReadTextRefusals(t *testing.T) {
	a := material.Area{Dir: t.TempDir()}
	bin, err := a.Put("blob.bin", strings.NewReader("a\x00b"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		digest string
		limit  int64
		want   contract.Code
	}{
		{bin.SHA256, 0, contract.CodeMaterialInvalid},
		{"sha256:" + strings.Repeat("a", 64), 0, contract.CodeMaterialNotFound},
		{"sha256:../../etc/passwd", 0, contract.CodeMaterialInvalid},
		{bin.SHA256, material.MaxReadLimit + 1, contract.CodeMaterialInvalid},
	} {
		if _, err := a.ReadText(c.digest, 0, c.limit); code(err) != c.want {
			t.Errorf("ReadText(%q, %d) = %v, want %s", c.digest, c.limit, err, c.want)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"a.txt", "Report 2026 (final).pdf", "ünïcode.md"} {
		if err := material.CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`, "a\nb", "\xff", strings.Repeat("x", 256)} {
		if err := material.CheckName(bad); code(err) != contract.CodeMaterialInvalid {
			t.Errorf("CheckName(%q) = %v, want material_invalid", bad, err)
		}
	}
}

func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"a.txt", "../x", "a\x00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if material.CheckName(name) == nil && (strings.ContainsAny(name, `/\`) || name == ".." || name == "") {
			t.Fatalf("CheckName(%q) accepted a name that could be a path", name)
		}
	})
}

func FuzzParseDigest(f *testing.F) {
	f.Add("sha256:" + strings.Repeat("0", 64))
	f.Add("sha256:../x")
	f.Fuzz(func(t *testing.T, d string) {
		h, err := material.ParseDigest(d)
		if err == nil && (len(h) != 64 || strings.ContainsAny(h, "/.\\")) {
			t.Fatalf("ParseDigest(%q) = %q", d, h)
		}
	})
}
