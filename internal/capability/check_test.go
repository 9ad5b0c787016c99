package capability_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want file of testdata cases")

// wantFile is the txtar entry that holds a case's expected outcome.
const wantFile = "want"

// outcome renders what Check returned: the release and its declarations in brief, or the
// error's code and one line per problem.
func outcome(pkg *capability.Package, err error) string {
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "error %s\n", contract.CodeOf(err))
		var ps capability.Problems
		if !errors.As(err, &ps) {
			fmt.Fprintf(&b, "%v\n", err)
		}
		for _, p := range ps {
			fmt.Fprintf(&b, "%s %s\n", p.Code, p)
		}
		return b.String()
	}
	d := pkg.Declarations
	fmt.Fprintf(&b, "ok %s files=%s\n", d.Release, strings.Join(pkg.Files, ","))
	for _, r := range d.Rules {
		fmt.Fprintf(&b, "rule %s\n", r.ID)
	}
	for _, s := range d.Sources {
		fmt.Fprintf(&b, "source %s %s %s %v\n", s.Name, s.Type, s.Tier, s.Words)
	}
	for _, c := range d.CaseTypes {
		fmt.Fprintf(&b, "case_type %s key=%s%v opening=%s@%s acceptance=%s@%s once=%v exploration=%v\n",
			c.Name, c.KeyPredicate, c.KeyArgs, c.Opening, c.OpeningFloor, c.Acceptance, c.Floor, c.OncePerCase, c.Exploration)
	}
	for _, a := range d.Actions {
		fmt.Fprintf(&b, "action %s approval=%s params=%d preconditions=%d bindings=%v effects=%d", a.Name, a.Approval, len(a.Params), len(a.Preconditions), a.Bindings, len(a.Effects))
		if a.Execution != nil {
			fmt.Fprintf(&b, " tool=%s kind=%s returns=%d", a.Execution.Tool, a.Execution.Kind, len(a.Execution.Returns))
			if a.Execution.Source != "" {
				fmt.Fprintf(&b, " source=%s", a.Execution.Source)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestCheck runs every case in testdata/check: a txtar archive of package files and a
// "want" file with the expected outcome.
func TestCheck(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("testdata/check/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata cases: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			files := map[string][]byte{}
			want, wantAt := "", -1
			for i, f := range ar.Files {
				if f.Name == wantFile {
					want, wantAt = string(f.Data), i
					continue
				}
				files[f.Name] = f.Data
			}
			pkg, err := capability.Check(files)
			if err != nil && contract.CodeOf(err) == "" {
				t.Fatalf("Check error %v has no code", err)
			}
			got := outcome(pkg, err)
			if *update {
				if wantAt < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: wantFile})
					wantAt = len(ar.Files) - 1
				}
				ar.Files[wantAt].Data = []byte(got)
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Check(%s) mismatch (-want +got):\n%s", path, diff)
			}
		})
	}
}

// FuzzParseManifest feeds arbitrary capability.toml text, beside the rules of each seed,
// to Check: it must never panic, and every refusal must carry a code.
func FuzzParseManifest(f *testing.F) {
	paths, _ := filepath.Glob("testdata/check/*.txtar")
	for _, path := range paths {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name == capability.ManifestFile {
				f.Add(file.Data)
			}
		}
	}
	rules := []byte("done(id: X) :- started(id: X), not failed(id: X).\n")
	f.Fuzz(func(t *testing.T, manifest []byte) {
		_, err := capability.Check(map[string][]byte{capability.ManifestFile: manifest, "rules.dl": rules})
		if err != nil && contract.CodeOf(err) == "" {
			t.Fatalf("Check error %v has no code", err)
		}
	})
}
