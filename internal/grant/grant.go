// Package grant signs and verifies the single-use grants that let a worker run one
// dispatched call.
package grant

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/gowebpki/jcs"
)

// MaxSkew is how far in the future a grant's issuedAt may lie, for clocks that disagree a
// little between the authority and a worker.
const MaxSkew = 2 * time.Minute

// MaxTokenLen bounds a token before any decoding, so a hostile row cannot make the worker
// allocate much.
const MaxTokenLen = 8 << 10

// b64 is base64url without padding; Strict refuses non-canonical trailing bits, so one
// payload has one encoding.
var b64 = base64.RawURLEncoding.Strict()

// Sign returns the token for g under key: base64url(JCS(g)) "." base64url(HMAC-SHA256).
// Times are normalised to UTC whole seconds first. The key is the Connection key's bytes.
func Sign(key []byte, g contract.Grant) (string, error) {
	g.IssuedAt = g.IssuedAt.UTC().Truncate(time.Second)
	g.ExpiresAt = g.ExpiresAt.UTC().Truncate(time.Second)
	payload, err := Canonical(g)
	if err != nil {
		return "", fmt.Errorf("sign grant: %w", err)
	}
	return b64.EncodeToString(payload) + "." + b64.EncodeToString(mac(key, payload)), nil
}

// Canonical returns the JCS (RFC 8785) bytes of g, the payload Sign signs.
func Canonical(g contract.Grant) ([]byte, error) {
	if b, ok := canonicalDirect(g); ok {
		return b, nil
	}
	return canonicalJCS(g)
}

// canonicalJCS is Canonical through encoding/json and a JCS transform, for any grant.
func canonicalJCS(g contract.Grant) ([]byte, error) {
	raw, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(raw)
}

// maxExactInt is the largest integer a JSON number holds exactly in JCS (an IEEE double).
const maxExactInt = 1 << 53

// canonicalDirect writes the JCS bytes of g directly, with its keys in JCS order, for the
// grants every call signs and checks: strings of printable ASCII other than a quote or a
// backslash (written as they are in both encodings), UTC whole-second times inside years
// 0–9999 and a generation JCS holds exactly. Parsing a grant checks that its payload is
// canonical by encoding it again (encoding/json and then the JCS transform were ≈ 40% of
// a grant's parse: benchmarks/README.md). For any other grant it returns false, and
// Canonical takes the general path; FuzzCanonical compares the two.
func canonicalDirect(g contract.Grant) ([]byte, bool) {
	fields := [...]struct {
		key, val string
		omit     bool
	}{
		{key: "action", val: g.Action},
		{key: "adapterDigest", val: g.AdapterDigest},
		{key: "connection", val: string(g.Connection)},
		{key: "expiresAt"},
		{key: "generation"},
		{key: "invocation", val: g.Invocation},
		{key: "issuedAt"},
		{key: "pathCheck", val: g.PathCheck, omit: g.PathCheck == ""},
		{key: "project", val: string(g.Project)},
		{key: "requestDigest", val: g.RequestDigest},
		{key: "source", val: g.Source},
		{key: "sourceDigest", val: g.SourceDigest},
		{key: "tool", val: string(g.Tool)},
		{key: "toolDigest", val: g.ToolDigest},
		{key: "workerId", val: g.WorkerID},
	}
	if g.Generation > maxExactInt || g.Generation < -maxExactInt || !plainTime(g.IssuedAt) || !plainTime(g.ExpiresAt) {
		return nil, false
	}
	b := make([]byte, 0, 512)
	b = append(b, '{')
	for _, f := range fields {
		if f.omit {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), f.key...), '"', ':')
		switch f.key {
		case "expiresAt":
			b = g.ExpiresAt.AppendFormat(append(b, '"'), time.RFC3339)
			b = append(b, '"')
			continue
		case "issuedAt":
			b = g.IssuedAt.AppendFormat(append(b, '"'), time.RFC3339)
			b = append(b, '"')
			continue
		case "generation":
			b = strconv.AppendInt(b, g.Generation, 10)
			continue
		}
		for i := 0; i < len(f.val); i++ {
			if c := f.val[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return nil, false
			}
		}
		b = append(append(append(b, '"'), f.val...), '"')
	}
	return append(b, '}'), true
}

// plainTime reports whether encoding/json writes t as time.RFC3339 does with "Z": UTC,
// whole seconds, a four-digit year.
func plainTime(t time.Time) bool {
	return t.Location() == time.UTC && t.Nanosecond() == 0 && t.Year() >= 0 && t.Year() <= 9999
}

func mac(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)
}

// Verify checks token against key and against want, the grant as the worker knows it on
// its own, at time now. The MAC is checked in constant time before the payload is parsed;
// then every field but the times must equal want's, and now must lie in
// [issuedAt−MaxSkew, expiresAt). It returns the signed grant. Refusals are *contract.Error
// with codes grant_malformed, grant_signature, grant_mismatch (naming the field) and
// grant_expired.
func Verify(key []byte, token string, want contract.Grant, now time.Time) (contract.Grant, error) {
	payload, sum, err := split(token)
	if err != nil {
		return contract.Grant{}, err
	}
	if err := checkMAC(key, payload, sum); err != nil {
		return contract.Grant{}, err
	}
	g, err := parse(payload)
	if err != nil {
		return contract.Grant{}, err
	}
	return check(g, want, now)
}

// Parsed is a grant token split and its payload parsed, not yet verified. A caller that
// must read a token's grant before it can verify it (the authority reads the adapter
// digest a claim pins, then verifies the claim in its batch) parses the token once with
// it, rather than with [Decode] and then again in [Verify].
type Parsed struct {
	payload, sum []byte
	g            contract.Grant
}

// Parse splits token and parses its payload, refusing what [Decode] refuses; its grant is
// not verified until [Parsed.Verify].
func Parse(token string) (Parsed, error) {
	payload, sum, err := split(token)
	if err != nil {
		return Parsed{}, err
	}
	g, err := parse(payload)
	if err != nil {
		return Parsed{}, err
	}
	return Parsed{payload: payload, sum: sum, g: g}, nil
}

// Unverified returns the grant p carries WITHOUT checking its signature; use it only to
// inspect a token, never to decide to run.
func (p Parsed) Unverified() contract.Grant { return p.g }

// Verify checks p as [Verify] checks its token: the MAC under key, then every field but
// the times against want, then the times against now.
func (p Parsed) Verify(key []byte, want contract.Grant, now time.Time) (contract.Grant, error) {
	if p.payload == nil {
		return contract.Grant{}, contract.Errorf(contract.CodeGrantMalformed, "the grant token was never parsed; a grant is base64url(payload) \".\" base64url(mac) as the authority signs it.")
	}
	if err := checkMAC(key, p.payload, p.sum); err != nil {
		return contract.Grant{}, err
	}
	return check(p.g, want, now)
}

// checkMAC compares sum with the MAC of payload under key in constant time.
func checkMAC(key, payload, sum []byte) error {
	if !hmac.Equal(sum, mac(key, payload)) {
		return contract.Errorf(contract.CodeGrantSignature,
			"the grant's signature does not match this worker's Connection key; check that the worker runs with the key of the Connection the work was dispatched to.")
	}
	return nil
}

// check compares g, whose MAC has been checked, with want and its times with now.
func check(g, want contract.Grant, now time.Time) (contract.Grant, error) {
	if field := mismatch(g, want); field != "" {
		return contract.Grant{}, contract.Errorf(contract.CodeGrantMismatch,
			"the grant's %s is not what this worker knows; the work was granted for another call, instance or generation and is neither claimed nor run.", field)
	}
	if !now.Before(g.ExpiresAt) {
		return contract.Grant{}, contract.Errorf(contract.CodeGrantExpired,
			"the grant expired at %s; the authority must dispatch the call again.", g.ExpiresAt.Format(time.RFC3339))
	}
	if g.IssuedAt.After(now.Add(MaxSkew)) {
		return contract.Grant{}, contract.Errorf(contract.CodeGrantExpired,
			"the grant was issued at %s, in this worker's future; fix the clock of the worker or the authority.", g.IssuedAt.Format(time.RFC3339))
	}
	return g, nil
}

// Decode returns the grant a token carries WITHOUT checking its signature; use it only to
// inspect a token, never to decide to run.
func Decode(token string) (contract.Grant, error) {
	p, err := Parse(token)
	return p.g, err
}

func split(token string) (payload, sum []byte, err error) {
	malformed := func(why string) error {
		return contract.Errorf(contract.CodeGrantMalformed, "the grant token %s; a grant is base64url(payload) \".\" base64url(mac) as the authority signs it.", why)
	}
	if len(token) > MaxTokenLen {
		return nil, nil, malformed(fmt.Sprintf("is longer than %d bytes", MaxTokenLen))
	}
	p, s, ok := strings.Cut(token, ".")
	if !ok || strings.Contains(s, ".") {
		return nil, nil, malformed("is not two parts joined by one dot")
	}
	if payload, err = b64.DecodeString(p); err != nil || len(payload) == 0 {
		return nil, nil, malformed("payload is not base64url without padding")
	}
	if sum, err = b64.DecodeString(s); err != nil || len(sum) != sha256.Size {
		return nil, nil, malformed("MAC is not 32 bytes of base64url without padding")
	}
	return payload, sum, nil
}

// parse decodes a payload strictly and refuses one that is not already canonical, so a
// grant has exactly one byte form. A payload that is the canonical form of the Grant its
// flat members name is read from them (parseDirect); anything else, and every refusal,
// takes the strict decode.
func parse(payload []byte) (contract.Grant, error) {
	if g, ok := parseDirect(payload); ok {
		return g, nil
	}
	return parseStrict(payload)
}

// parseDirect reads payload, when it is a flat object of the Grant's keys with plain
// strings and an integer generation, into a Grant, and reports true when that Grant's
// canonical form is payload itself. Such a payload is strict JSON whose decode is that
// same Grant, so parseStrict would accept it and return it (FuzzParseDirect); the
// worker verifies every grant it is served and the authority every grant a Claim or a
// Report carries, and the strict decode of one was among their largest costs per
// governed action (benchmarks/README.md).
func parseDirect(payload []byte) (contract.Grant, bool) {
	var buf [16]flatMember
	ms, ok := flatObject(payload, buf[:0])
	if !ok {
		return contract.Grant{}, false
	}
	var g contract.Grant
	for _, m := range ms {
		str := ""
		if m.val[0] == '"' {
			str = string(m.val[1 : len(m.val)-1])
		} else if string(m.key) != `"generation"` {
			return contract.Grant{}, false
		}
		switch string(m.key) {
		case `"action"`:
			g.Action = str
		case `"adapterDigest"`:
			g.AdapterDigest = str
		case `"connection"`:
			g.Connection = contract.ConnectionID(str)
		case `"expiresAt"`, `"issuedAt"`:
			t, err := time.Parse(time.RFC3339, str)
			if err != nil {
				return contract.Grant{}, false
			}
			if string(m.key) == `"issuedAt"` {
				g.IssuedAt = t
			} else {
				g.ExpiresAt = t
			}
		case `"generation"`:
			n, err := strconv.ParseInt(string(m.val), 10, 64)
			if err != nil {
				return contract.Grant{}, false
			}
			g.Generation = n
		case `"invocation"`:
			g.Invocation = str
		case `"pathCheck"`:
			g.PathCheck = str
		case `"project"`:
			g.Project = contract.ProjectID(str)
		case `"requestDigest"`:
			g.RequestDigest = str
		case `"source"`:
			g.Source = str
		case `"sourceDigest"`:
			g.SourceDigest = str
		case `"tool"`:
			g.Tool = contract.ToolID(str)
		case `"toolDigest"`:
			g.ToolDigest = str
		case `"workerId"`:
			g.WorkerID = str
		default:
			return contract.Grant{}, false
		}
	}
	canon, ok := canonicalDirect(g)
	if !ok || !bytes.Equal(canon, payload) {
		return contract.Grant{}, false
	}
	return g, true
}

// parseStrict is parse through DecodeStrict.
func parseStrict(payload []byte) (contract.Grant, error) {
	var g contract.Grant
	if err := contract.DecodeStrict(payload, &g); err != nil {
		return contract.Grant{}, contract.Errorf(contract.CodeGrantMalformed, "the grant payload is not grant JSON (%v); the authority and worker disagree on the grant contract.", err)
	}
	canon, err := Canonical(g)
	if err != nil || !bytes.Equal(canon, payload) {
		return contract.Grant{}, contract.Errorf(contract.CodeGrantMalformed, "the grant payload is not in canonical (JCS) form with UTC whole-second times; the authority must sign with grant.Sign.")
	}
	return g, nil
}

// mismatch returns the JSON name of the first field in which got and want differ,
// ignoring the times, or "".
func mismatch(got, want contract.Grant) string {
	switch {
	case got.Project != want.Project:
		return "project"
	case got.Invocation != want.Invocation:
		return "invocation"
	case got.Action != want.Action:
		return "action"
	case got.Tool != want.Tool:
		return "tool"
	case got.ToolDigest != want.ToolDigest:
		return "toolDigest"
	case got.Source != want.Source:
		return "source"
	case got.SourceDigest != want.SourceDigest:
		return "sourceDigest"
	case got.Connection != want.Connection:
		return "connection"
	case got.WorkerID != want.WorkerID:
		return "workerId"
	case got.Generation != want.Generation:
		return "generation"
	case got.AdapterDigest != want.AdapterDigest:
		return "adapterDigest"
	case got.RequestDigest != want.RequestDigest:
		return "requestDigest"
	}
	return ""
}

// RequestDigest returns "sha256:" and the hex sha256 of JCS({"args", "target", "toolSpec"})
// over the exact JSON served in a work row. Each part must be valid JSON.
func RequestDigest(args, target, toolSpec json.RawMessage) (string, error) {
	// Each part must be one JSON value on its own, or a part could smuggle extra members
	// into the object built around it.
	for _, part := range []json.RawMessage{args, target, toolSpec} {
		if !json.Valid(part) {
			return "", contract.Errorf(contract.CodeWorkRow, "the served args, target or toolSpec is not one JSON value; the authority must serve JSON values.")
		}
	}
	if canon, ok := requestDirect(args, target, toolSpec); ok {
		return Digest(canon), nil
	}
	var buf bytes.Buffer
	buf.WriteString(`{"args":`)
	buf.Write(args)
	buf.WriteString(`,"target":`)
	buf.Write(target)
	buf.WriteString(`,"toolSpec":`)
	buf.Write(toolSpec)
	buf.WriteString(`}`)
	canon, err := jcs.Transform(buf.Bytes())
	if err != nil {
		return "", contract.Errorf(contract.CodeWorkRow, "the served args, target or toolSpec is not valid JSON; the authority must serve JSON values.")
	}
	return Digest(canon), nil
}

// requestDirect writes the JCS bytes of {"args", "target", "toolSpec"} directly for the
// parts every call serves: each a JSON object whose keys are distinct and whose keys and
// string values are printable ASCII other than a quote or a backslash (written as they
// are in both encodings), and whose other values are true, false, null or an integer
// JCS holds exactly, written as they are. Its members are sorted as JCS sorts them: by
// UTF-16 code units, which for ASCII is by bytes. The JCS transform was the most a row's
// checks allocated (benchmarks/README.md, "Where a governed action's time goes"). For
// any other parts it returns false, and RequestDigest takes the transform;
// FuzzRequestDigest compares the two.
func requestDirect(args, target, toolSpec []byte) ([]byte, bool) {
	var buf [16]flatMember
	b := make([]byte, 0, len(args)+len(target)+len(toolSpec)+len(`{"args":,"target":,"toolSpec":}`))
	for i, part := range [...]struct {
		key  string
		text []byte
	}{{`{"args":`, args}, {`,"target":`, target}, {`,"toolSpec":`, toolSpec}} {
		ms, ok := flatObject(part.text, buf[:0])
		if !ok {
			return nil, false
		}
		b = append(b, part.key...)
		b = append(b, '{')
		for j, m := range ms {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, m.key...)
			b = append(b, ':')
			b = append(b, m.val...)
		}
		b = append(b, '}')
		if i == 2 {
			b = append(b, '}')
		}
	}
	return b, true
}

// flatMember is one member of a flat object: its key, quotes included, and its value's
// text.
type flatMember struct{ key, val []byte }

// flatObject reads b, one JSON object, into ms sorted by key, when every key and value is
// of the kinds requestDirect writes; else it reports false.
func flatObject(b []byte, ms []flatMember) ([]flatMember, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return ms, skipSpace(b, i+1) == len(b)
	}
	for {
		end, ok := plainString(b, i)
		if !ok {
			return nil, false
		}
		key := b[i:end]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		if end, ok = flatValue(b, i); !ok {
			return nil, false
		}
		ms = append(ms, flatMember{key: key, val: b[i:end]})
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i >= len(b) || b[i] != '}' || skipSpace(b, i+1) != len(b) {
			return nil, false
		}
		break
	}
	// By the keys' text, not their quotes: "a b" sorts before "a".
	slices.SortFunc(ms, func(x, y flatMember) int { return bytes.Compare(x.key[1:len(x.key)-1], y.key[1:len(y.key)-1]) })
	for j := 1; j < len(ms); j++ {
		if bytes.Equal(ms[j-1].key, ms[j].key) {
			return nil, false // JCS refuses a key named twice
		}
	}
	return ms, true
}

// flatValue returns the end of the value at b[i] when it is a plain string, true, false,
// null or an integer JCS holds exactly and writes as it is written here.
func flatValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return plainString(b, i)
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range [...]string{"true", "false", "null"} {
			if bytes.HasPrefix(b[i:], []byte(lit)) {
				return i + len(lit), true
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		j := i
		if c == '-' {
			j++
		}
		start := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		digits := b[start:j]
		if len(digits) == 0 || len(digits) > 16 || len(digits) > 1 && digits[0] == '0' || c == '-' && string(digits) == "0" {
			return 0, false // none, too long, a leading zero, or -0 (JCS writes 0)
		}
		if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
			return 0, false
		}
		var n int64 // at most 16 digits: no overflow
		for _, d := range digits {
			n = n*10 + int64(d-'0')
		}
		return j, n <= maxExactInt
	}
	return 0, false
}

// plainString returns the end of the string at b[i], past its closing quote, when it is
// printable ASCII without an escape.
func plainString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return 0, false
		}
	}
	return 0, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// Digest returns "sha256:" and the hex sha256 of b.
func Digest(b []byte) string {
	return contract.Sum(b).String()
}
