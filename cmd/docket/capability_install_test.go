package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestCapabilityInstall runs capabilityInstallCmd against a child docket serve. It calls
// the command directly because `docket capability install` is registered in capability.go;
// capability_install.txtar covers the same path through the binary once it is.
func TestCapabilityInstall(t *testing.T) {
	bin, err := exec.LookPath("docket")
	if err != nil {
		t.Skipf("docket binary not on PATH: %v", err)
	}
	home := filepath.Join(t.TempDir(), "home")
	e, out := testEnv(map[string]string{"DOCKET_HOME": home, "DOCKET_PASSPHRASE": "correct horse battery"})
	if err := run(t.Context(), []string{"init"}, e); err != nil {
		t.Fatalf("docket init: %v\n%s", err, out)
	}
	srv := startServe(t, bin, home)
	defer srv.stop(t)
	waitClient(t, e)

	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("capability.toml", "id = \"demo.calc\"\nversion = \"1.0.0\"\ntitle = \"Demo\"\n\n[[source]]\nname = \"workspace\"\ntype = \"file\"\nwords = [\"input\"]\n")
	write("rules.dl", "double(job: J, value: V) :- input(job: J, n: N), add(left: N, right: N, result: V).\n")
	write("README.md", "not uploaded\n")

	install := func() (string, error) {
		out.Reset()
		err := (&capabilityInstallCmd{clientFlags: clientFlags{Project: "default", Output: "text"}, Dir: dir}).Run(t.Context(), e)
		return out.String(), err
	}
	tests := []struct {
		name string
		edit func()
		want string
		code contract.Code
	}{
		{"first install", func() {}, "demo.calc@1.0.0 installed in project default", ""},
		{"same release again", func() {}, "release already stored", ""},
		{"same version, other rules", func() {
			write("rules.dl", "triple(job: J, value: V) :- input(job: J, n: N), mul(left: N, right: 3, result: V).\n")
		}, "", contract.CodeReleaseConflict},
		{"broken package", func() { write("capability.toml", "id = \"x\"\n") }, "", contract.CodeCapabilityInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.edit()
			got, err := install()
			if c := contract.CodeOf(err); c != tt.code {
				t.Fatalf("install error = %v, want code %q", err, tt.code)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("install printed %q, want %q", got, tt.want)
			}
		})
	}
}
