package event_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority/event"
)

// TestGoldenFilesCoverCatalog wants a golden file of stored bytes for every type of the
// catalog (testdata/<type>.json, and testdata/<type>@<n>.json for more shapes of the same
// type: other optional fields, other Tools' inputs), and none for a type it does not list:
// the files are what events already in a data dir look like, so that a change of a payload
// struct is seen against them.
func TestGoldenFilesCoverCatalog(t *testing.T) {
	t.Parallel()
	listed := map[string]bool{}
	for _, k := range event.Catalog {
		listed[k.Type] = true
		b, err := os.ReadFile(filepath.Join("testdata", k.Type+".json"))
		if err != nil {
			t.Errorf("%s has no golden file: %v", k.Type, err)
			continue
		}
		if !json.Valid(b) {
			t.Errorf("testdata/%s.json is not JSON", k.Type)
		}
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		typ, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".json"), "@")
		if !listed[typ] {
			t.Errorf("%s is the golden file of %s, which the catalog does not list", f, typ)
		}
	}
}

var update = flag.Bool("update", false, "rewrite each golden file with its payload re-encoded, after a deliberate format change (see event.FormatVersion)")

// TestGoldenRoundTrip decodes each golden file with its type's payload and encodes it
// again: the bytes must be the same, so that a field renamed, retyped or dropped from a
// payload struct fails here before it blanks a reader of events already stored.
func TestGoldenRoundTrip(t *testing.T) {
	t.Parallel()
	for _, k := range event.Catalog {
		t.Run(k.Type, func(t *testing.T) {
			if got := k.Payload.EventType(); got != k.Type {
				t.Fatalf("the payload of %s names its type %s", k.Type, got)
			}
			more, err := filepath.Glob(filepath.Join("testdata", k.Type+"@*.json"))
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range append([]string{filepath.Join("testdata", k.Type+".json")}, more...) {
				roundTrip(t, k, path)
			}
		})
	}
}

func roundTrip(t *testing.T, k event.Kind, path string) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := event.Decode(k.Type, want)
	if err != nil {
		t.Fatalf("Decode %s: %v", path, err)
	}
	if reflect.TypeOf(p) != reflect.TypeOf(k.Payload) {
		t.Fatalf("Decode gave a %T, want a %T", p, k.Payload)
	}
	got, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s re-encodes differently; a stored event would change meaning:\n got %s\nwant %s", path, got, want)
	}
}

func TestDecodeUnknownType(t *testing.T) {
	t.Parallel()
	_, err := event.Decode("a.type.added.later", []byte(`{}`))
	if !errors.Is(err, event.ErrUnknownType) {
		t.Fatalf("Decode of an unknown type = %v, want ErrUnknownType", err)
	}
}
