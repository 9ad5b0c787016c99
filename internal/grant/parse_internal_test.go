package grant

import (
	"reflect"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// FuzzParseDirect checks that every payload parseDirect reads is one the strict decode
// accepts, as the same Grant: parse takes the one where it took the other.
func FuzzParseDirect(f *testing.F) {
	at := time.Date(2026, 12, 3, 13, 0, 0, 0, time.UTC)
	for _, g := range []contract.Grant{
		{Project: "default", Invocation: "agt_1.2", Action: "load", Tool: "test.files@1", ToolDigest: "sha256:ab", Source: "files",
			SourceDigest: "sha256:cd", Connection: "con_1", WorkerID: "wkr-1", Generation: 3, AdapterDigest: "sha256:ef",
			RequestDigest: "sha256:01", IssuedAt: at, ExpiresAt: at.Add(time.Minute)},
		{Project: "p", Generation: -7, PathCheck: "path", IssuedAt: at, ExpiresAt: at},
		{},
	} {
		b, err := Canonical(g)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{}`, `{"generation":1}`, `{"generation":"1"}`, `{"action":null}`, `{"action":"a","action":"a"}`,
		`{"issuedAt":"2026-12-03T13:00:00+00:00"}`, `{"issuedAt":"2026-12-03T13:00:00.5Z"}`, `{"Action":"a"}`, `{"pathCheck":""}`,
		` {"action":"a"} `, `{"extra":"x"}`, `{"generation":01}`, `{"generation":-0}`, `{"issuedAt":"0000-01-01T00:00:00Z"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, ok := parseDirect(b)
		if !ok {
			return
		}
		want, err := parseStrict(b)
		if err != nil {
			t.Fatalf("parseDirect(%q) = %+v, but the strict decode refuses it: %v", b, g, err)
		}
		if !reflect.DeepEqual(g, want) {
			t.Fatalf("parseDirect(%q) = %+v, the strict decode %+v", b, g, want)
		}
	})
}

// TestParse_Direct checks that the canonical payloads Sign writes are read directly, and
// that what is not canonical still meets the strict decode's refusal.
func TestParse_Direct(t *testing.T) {
	at := time.Date(2026, 12, 3, 13, 0, 0, 0, time.UTC)
	g := contract.Grant{Project: "default", Invocation: "agt_1.2", Action: "load", Tool: "test.files@1", WorkerID: "wkr-1",
		Generation: 3, IssuedAt: at, ExpiresAt: at.Add(time.Minute)}
	canon, err := Canonical(g)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		payload string
		direct  bool
	}{
		{"canonical", string(canon), true},
		{"a space", " " + string(canon), false},
		{"keys out of order", `{"project":"default","action":"load"}`, false},
		{"an unknown key", `{"action":"load","zz":"x"}`, false},
		{"an offset time", `{"issuedAt":"2026-12-03T13:00:00+01:00"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseDirect([]byte(tt.payload))
			if ok != tt.direct {
				t.Fatalf("parseDirect(%s) took it: %v, want %v", tt.payload, ok, tt.direct)
			}
			if ok && !reflect.DeepEqual(got, g) {
				t.Fatalf("parseDirect(%s) = %+v, want %+v", tt.payload, got, g)
			}
			if _, err := parse([]byte(tt.payload)); !ok && contract.CodeOf(err) != contract.CodeGrantMalformed {
				t.Fatalf("parse(%s) = %v, want grant_malformed", tt.payload, err)
			}
		})
	}
}
