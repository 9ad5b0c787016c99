package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestServe_ProvableRecord runs the verified calculation to a Case close on a real serve,
// then checks what a third party would: the keys served at the well-known paths are
// the ones docket key public prints, the close was signed, and the exported bundle
// verifies with those keys alone.
func TestServe_ProvableRecord(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testProvableRecord(t, "") })
	t.Run("postgres", func(t *testing.T) { testProvableRecord(t, pgTestDB(t)) })
}

func testProvableRecord(t *testing.T, db string) {
	s := runVerifiedCalculation(t, db)

	printed := s.docket(t, nil, "key", "public")
	var want any
	if err := json.Unmarshal([]byte(printed), &want); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/.well-known/jwks.json", "/.well-known/http-message-signatures-directory"} {
		res, err := http.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d, %v", path, res.StatusCode, err)
		}
		var got any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET %s differs from docket key public (-printed +served):\n%s", path, diff)
		}
	}

	verified := s.docket(t, nil, "events", "verify")
	if m := regexp.MustCompile(`signed up to seq ([1-9][0-9]*), board ok`).FindStringSubmatch(verified); m == nil {
		t.Errorf("docket events verify = %q; want the Case close's checkpoint signed", verified)
	}
	dir := t.TempDir()
	keys, bundle := filepath.Join(dir, "keys.json"), filepath.Join(dir, "default.bundle")
	writeFile(t, keys, printed, 0o600)
	extra := []string{}
	if db != "" {
		extra = append(extra, "--db", db)
	}
	s.docket(t, nil, append([]string{"events", "export", "--out", bundle}, extra...)...)
	if out := s.docket(t, nil, "events", "verify", bundle, "--keys", keys); !strings.Contains(out, "chain ok") {
		t.Errorf("docket events verify BUNDLE = %q, want it verified", out)
	}
}
