package datadir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/datadir"
)

func TestWritePrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "secret")
	for _, body := range []string{"one\n", "two\n"} {
		if err := datadir.WritePrivate(path, []byte(body)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != body {
			t.Fatalf("read back %q, %v; want %q", b, err, body)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode = %v, %v; want 0600", fi.Mode(), err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("dir holds %v, %v; want only the file, no temporary left", ents, err)
	}
}

func TestDir(t *testing.T) {
	t.Parallel()
	got, err := datadir.Dir(func(k string) string {
		if k == datadir.HomeEnv {
			return "/x/home"
		}
		return ""
	})
	if err != nil || got != "/x/home" {
		t.Fatalf("Dir = %q, %v; want $DOCKET_HOME", got, err)
	}
}
