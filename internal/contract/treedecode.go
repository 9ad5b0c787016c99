package contract

import (
	"strconv"
	"time"
)

// The hop's bodies and grants decoded from their parse.
//
// DecodeStrict parses its text into a tree and then, for most types, decodes the text
// again with encoding/json: a second, reflective pass that was the largest part of
// decoding a Claim or Report body and a grant, each parsed by the authority once per
// governed action (benchmarks/README.md, "Where a governed action's time goes"). For the
// few types below, whose fields are strings, whole numbers, booleans, times and argument
// rows, [decodeFromTree] builds the value from the tree instead. It takes only the plain
// shape — every key exactly a field's name and every value of its field's JSON kind —
// and declines anything else, which then decodes through encoding/json as before, so every
// refusal (and its wording) stays encoding/json's and explainDecode's. What it builds is
// what encoding/json would: TestDecodeFromTree_SameAsJSON and FuzzDecodeFromTree compare
// the two.

// claimBody, leaseBody and reportBody are the requests of a /work operation as its text
// holds them, "kind" beside the request's fields ([decodeOperation]).
type claimBody struct {
	Kind string `json:"kind"`
	ClaimRequest
}

type leaseBody struct {
	Kind string `json:"kind"`
	LeaseRequest
}

type reportBody struct {
	Kind string `json:"kind"`
	ReportRequest
}

// decodeFromTree decodes n, parsed and checked against v's type (walkType), into
// v when v is one of the types it knows and n has their plain shape, and reports whether
// it did; v is untouched when it did not.
func decodeFromTree(n *jnode, v any) bool {
	switch v := v.(type) {
	case *claimBody:
		return treeInto(n, v, claimField)
	case *leaseBody:
		return treeInto(n, v, leaseField)
	case *reportBody:
		return treeInto(n, v, reportField)
	case *Grant:
		return treeInto(n, v, grantField)
	}
	return false
}

// treeInto decodes the object n into a copy of *v, key by key through field, and stores
// it in *v when every key decoded: a value left half decoded is never seen, and
// encoding/json, which the caller falls back to, decodes into *v as it was.
func treeInto[T any](n *jnode, v *T, field func(key string, k *jnode, into *T) bool) bool {
	if n == nil || n.kind != '{' {
		return false
	}
	out := *v
	for i, key := range n.keys {
		if !field(key, n.kids[i], &out) {
			return false
		}
	}
	*v = out
	return true
}

func claimField(key string, k *jnode, c *claimBody) bool {
	switch key {
	case "kind":
		return treeString(k, &c.Kind)
	case "id":
		return treeString(k, &c.ID)
	case "workerId":
		return treeString(k, &c.WorkerID)
	case "workerGeneration":
		return treeInt(k, &c.Generation)
	case "grant":
		return treeString(k, &c.Grant)
	}
	return false
}

func leaseField(key string, k *jnode, l *leaseBody) bool {
	switch key {
	case "kind":
		return treeString(k, &l.Kind)
	case "workerId":
		return treeString(k, &l.WorkerID)
	case "workerGeneration":
		return treeInt(k, &l.Generation)
	}
	return false
}

func reportField(key string, k *jnode, r *reportBody) bool {
	switch key {
	case "kind":
		return treeString(k, &r.Kind)
	case "id":
		return treeString(k, &r.ID)
	case "ok":
		return treeBool(k, &r.OK)
	case "effectUnknown":
		return treeBool(k, &r.EffectUnknown)
	case "result":
		return treeResult(k, &r.Result)
	case "errorCode":
		s := string(r.Code)
		ok := treeString(k, &s)
		r.Code = Code(s)
		return ok
	case "reason":
		return treeString(k, &r.Reason)
	case "workerId":
		return treeString(k, &r.WorkerID)
	case "workerGeneration":
		return treeInt(k, &r.Generation)
	case "grant":
		return treeString(k, &r.Grant)
	}
	return false // "facts" among them: a report the hop refuses, decoded as before
}

func grantField(key string, k *jnode, g *Grant) bool {
	var s *string
	switch key {
	case "project":
		p := string(g.Project)
		ok := treeString(k, &p)
		g.Project = ProjectID(p)
		return ok
	case "tool":
		t := string(g.Tool)
		ok := treeString(k, &t)
		g.Tool = ToolID(t)
		return ok
	case "connection":
		c := string(g.Connection)
		ok := treeString(k, &c)
		g.Connection = ConnectionID(c)
		return ok
	case "generation":
		return treeInt(k, &g.Generation)
	case "issuedAt":
		return treeTime(k, &g.IssuedAt)
	case "expiresAt":
		return treeTime(k, &g.ExpiresAt)
	case "invocation":
		s = &g.Invocation
	case "action":
		s = &g.Action
	case "toolDigest":
		s = &g.ToolDigest
	case "source":
		s = &g.Source
	case "sourceDigest":
		s = &g.SourceDigest
	case "workerId":
		s = &g.WorkerID
	case "adapterDigest":
		s = &g.AdapterDigest
	case "requestDigest":
		s = &g.RequestDigest
	case "pathCheck":
		s = &g.PathCheck
	default:
		return false
	}
	return treeString(k, s)
}

// treeString is a JSON string into a string: the parse decoded it as encoding/json does
// (it refuses the invalid UTF-8 and lone surrogates encoding/json would replace).
func treeString(k *jnode, into *string) bool {
	if k.kind != '"' {
		return false
	}
	*into = k.str
	return true
}

// treeInt is a JSON number into an int64, as encoding/json parses one: its text, in base
// 10, or nothing (a fraction, an exponent or a number out of range is its refusal).
func treeInt(k *jnode, into *int64) bool {
	if k.kind != '0' {
		return false
	}
	i, err := strconv.ParseInt(k.raw, 10, 64)
	if err != nil {
		return false
	}
	*into = i
	return true
}

func treeBool(k *jnode, into *bool) bool {
	if k.kind != 'b' {
		return false
	}
	*into = k.raw == "true"
	return true
}

// treeTime is a JSON string into a time.Time through its own UnmarshalJSON, given the
// value's text as encoding/json gives it. A node's offsets may be into a larger text
// than the one at hand (a /work body's operation is decoded from its part of the
// body), so the text is rebuilt from the string: only when it had no escape, which its
// length shows (every escape is longer than what it stands for); otherwise it declines.
func treeTime(k *jnode, into *time.Time) bool {
	if k.kind != '"' || k.end-k.start != len(k.str)+2 {
		return false
	}
	var t time.Time
	if err := t.UnmarshalJSON([]byte(`"` + k.str + `"`)); err != nil {
		return false
	}
	*into = t
	return true
}

// treeValue is a JSON scalar into a Value as [Value.UnmarshalJSON] reads its text: a
// string as the parse decoded it (as encoding/json does), a boolean, or a number's text
// through the same unmarshalNumber.
func treeValue(k *jnode) (Value, bool) {
	switch k.kind {
	case '"':
		return StringValue(k.str), true
	case 'b':
		return BoolValue(k.raw == "true"), true
	case '0':
		var v Value
		if err := v.unmarshalNumber(k.raw); err != nil {
			return Value{}, false
		}
		return v, true
	}
	return Value{}, false
}

// treeResult is a report's result, {"rows": [{column: scalar, …}, …]}, as encoding/json
// decodes it: a new WorkResult, a list of rows that is empty, not nil, when the text's is,
// and each row a new map, each value as [Value.UnmarshalJSON] reads it.
func treeResult(k *jnode, into **WorkResult) bool {
	if k.kind != '{' || *into != nil {
		return false
	}
	res := &WorkResult{}
	for i, key := range k.keys {
		rows := k.kids[i]
		if key != "rows" || rows.kind != '[' {
			return false
		}
		res.Rows = make([]Args, 0, len(rows.kids))
		for _, row := range rows.kids {
			if row.kind != '{' {
				return false
			}
			a := make(Args, len(row.keys))
			for j, col := range row.keys {
				v, ok := treeValue(row.kids[j])
				if !ok {
					return false
				}
				a[col] = v
			}
			res.Rows = append(res.Rows, a)
		}
	}
	*into = res
	return true
}
