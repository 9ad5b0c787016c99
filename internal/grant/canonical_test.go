package grant

import (
	"bytes"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/gowebpki/jcs"
)

// canonicalCases are grants the direct encoder writes, and ones it must leave to the
// general path, with whether it takes them.
var canonicalCases = []struct {
	name   string
	edit   func(*contract.Grant)
	direct bool
}{
	{"plain", func(*contract.Grant) {}, true},
	{"path check", func(g *contract.Grant) { g.PathCheck = "path" }, true},
	{"source-free", func(g *contract.Grant) { g.Source, g.SourceDigest = "", "" }, true},
	{"negative generation", func(g *contract.Grant) { g.Generation = -7 }, true},
	{"largest exact generation", func(g *contract.Grant) { g.Generation = maxExactInt }, true},
	{"generation past exact", func(g *contract.Grant) { g.Generation = maxExactInt + 1 }, false},
	{"a quote", func(g *contract.Grant) { g.Action = `lo"ad` }, false},
	{"a backslash", func(g *contract.Grant) { g.Action = `lo\ad` }, false},
	{"a control character", func(g *contract.Grant) { g.Action = "lo\tad" }, false},
	{"HTML characters", func(g *contract.Grant) { g.Action = "<a&b>" }, true},
	{"non-ASCII", func(g *contract.Grant) { g.Action = "lоad\u2028" }, false},
	{"invalid UTF-8", func(g *contract.Grant) { g.Action = "lo\xffad" }, false},
	{"DEL", func(g *contract.Grant) { g.Action = "lo\x7fad" }, false},
	{"fractional second", func(g *contract.Grant) { g.IssuedAt = g.IssuedAt.Add(time.Millisecond) }, false},
	{"another zone", func(g *contract.Grant) { g.ExpiresAt = g.ExpiresAt.In(time.FixedZone("X", 3600)) }, false},
	{"year 0", func(g *contract.Grant) { g.IssuedAt = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC) }, true},
}

// TestCanonical_direct checks that the direct encoder writes exactly the JCS bytes of
// encoding/json and the JCS transform for the grants it takes, and takes the ones it
// should.
func TestCanonical_direct(t *testing.T) {
	t.Parallel()
	for _, tt := range canonicalCases {
		t.Run(tt.name, func(t *testing.T) {
			g := sampleGrant()
			tt.edit(&g)
			if _, ok := canonicalDirect(g); ok != tt.direct {
				t.Fatalf("canonicalDirect takes %+v: %v, want %v", g, ok, tt.direct)
			}
			sameCanonical(t, g, tt.direct)
		})
	}
}

// FuzzCanonical compares the direct encoder with the general path on any grant.
func FuzzCanonical(f *testing.F) {
	f.Add("load", "sha256:aa", "con_0123456789abcdef", int64(3), int64(1764500000), int64(0), "", true)
	f.Add("lo\"ad", "", "c", int64(-1), int64(-62135596800), int64(5), "path", false)
	f.Add("<é>", "x\u2028", "\xff", int64(maxExactInt+1), int64(253402300799), int64(1), "\\", true)
	f.Fuzz(func(t *testing.T, action, digest, conn string, gen, unix, nanos int64, pathCheck string, utc bool) {
		g := sampleGrant()
		g.Action, g.AdapterDigest, g.Connection, g.Generation, g.PathCheck = action, digest, contract.ConnectionID(conn), gen, pathCheck
		g.IssuedAt = time.Unix(unix, nanos%1e9)
		if utc {
			g.IssuedAt = g.IssuedAt.UTC()
		}
		sameCanonical(t, g, false)
	})
}

// sameCanonical fails t unless the direct encoder, where it takes g (and it must when
// mustTake), writes what the general path writes.
func sameCanonical(t *testing.T, g contract.Grant, mustTake bool) {
	t.Helper()
	direct, ok := canonicalDirect(g)
	if mustTake && !ok {
		t.Fatalf("canonicalDirect(%+v) declined, want it written", g)
	}
	if !ok {
		return
	}
	general, err := canonicalJCS(g)
	if err != nil {
		t.Fatalf("canonicalDirect(%+v) = %s, but the general path refuses it: %v", g, direct, err)
	}
	if !bytes.Equal(direct, general) {
		t.Fatalf("canonicalDirect = %s\nJCS            = %s", direct, general)
	}
}

func sampleGrant() contract.Grant {
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	return contract.Grant{Project: "demo", Invocation: "op-1", Action: "load", Tool: "docket.workspace.read_json@1",
		ToolDigest: "sha256:aa", Source: "calc", SourceDigest: "sha256:cc", Connection: "con_0123456789abcdef",
		WorkerID: "wkr-1", Generation: 7, AdapterDigest: "sha256:dd", RequestDigest: "sha256:ee", IssuedAt: at, ExpiresAt: at.Add(5 * time.Minute)}
}

// requestCases are served parts for RequestDigest: those every call serves, and ones
// that reach each refusal of the direct encoder.
var requestCases = [][3]string{
	{`{"path":"data/input.json"}`, `{"source":"calc","sourceType":"file","sourceDigest":"sha256:aa"}`, `{"tool":"docket.workspace.read_json@1","digest":"sha256:bb","kind":"read"}`},
	{`{}`, `{"source":"","sourceType":"","sourceDigest":""}`, `{ "tool" : "t@1" , "kind":"read","digest":"d" }`},
	{`{"b":1,"a":-2,"c":true,"d":false,"e":null,"A":"x","_":"y","~":"z"}`, `{}`, `{}`},
	{`{"source":"","source 000":"","000000000000":""}`, `{}`, `{}`},
	{`{"n":9007199254740992,"m":-9007199254740992}`, `{}`, `{}`},
	{`{"n":9007199254740993}`, `{}`, `{}`},
	{`{"n":12345678901234567}`, `{}`, `{}`},
	{`{"n":-0}`, `{}`, `{}`},
	{`{"n":1.5}`, `{}`, `{}`},
	{`{"n":1e3}`, `{}`, `{}`},
	{`{"n":10}`, `{}`, `{}`},
	{`{"s":"a\"b"}`, `{}`, `{}`},
	{`{"s":"a\/b"}`, `{}`, `{}`},
	{`{"s":"é"}`, `{}`, `{}`},
	{"{\"s\":\"a\x7fb\"}", `{}`, `{}`},
	{`{"é":"s"}`, `{}`, `{}`},
	{`{"a":1,"a":2}`, `{}`, `{}`},
	{`{"a":{"b":1}}`, `{}`, `{}`},
	{`{"a":[1]}`, `{}`, `{}`},
	{`[]`, `{}`, `{}`},
	{`"s"`, `{}`, `{}`},
	{" {\"a\":1}\n", "\t{}", "{}\r"},
	{`{"a":1}`, `{}`, `{}{}`},
	{`{"a":1`, `{}`, `{}`},
	{`{"a" 1}`, `{}`, `{}`},
	{`{"a":1,}`, `{}`, `{}`},
	{`{"a":tru}`, `{}`, `{}`},
}

// TestRequestDigest_direct checks that the direct encoder writes the parts every call
// serves, and writes them as the JCS transform does.
func TestRequestDigest_direct(t *testing.T) {
	t.Parallel()
	for i, c := range requestCases {
		sameRequest(t, []byte(c[0]), []byte(c[1]), []byte(c[2]), i < 4)
	}
}

// FuzzRequestDigest compares the direct encoder of a request digest's parts with the
// JCS transform on any parts.
func FuzzRequestDigest(f *testing.F) {
	for _, c := range requestCases {
		f.Add([]byte(c[0]), []byte(c[1]), []byte(c[2]))
	}
	f.Fuzz(func(t *testing.T, args, target, toolSpec []byte) { sameRequest(t, args, target, toolSpec, false) })
}

// sameRequest fails t unless the direct encoder, where it takes the parts (and it must
// when mustTake), writes what the JCS transform writes for them.
func sameRequest(t *testing.T, args, target, toolSpec []byte, mustTake bool) {
	t.Helper()
	direct, ok := requestDirect(args, target, toolSpec)
	if mustTake && !ok {
		t.Fatalf("requestDirect(%s, %s, %s) declined, want it written", args, target, toolSpec)
	}
	if !ok {
		return
	}
	general, err := jcs.Transform([]byte(`{"args":` + string(args) + `,"target":` + string(target) + `,"toolSpec":` + string(toolSpec) + `}`))
	if err != nil {
		t.Fatalf("requestDirect(%s, %s, %s) = %s, but the JCS transform refuses them: %v", args, target, toolSpec, direct, err)
	}
	if !bytes.Equal(direct, general) {
		t.Fatalf("requestDirect(%s, %s, %s) = %s, the JCS transform %s", args, target, toolSpec, direct, general)
	}
}
