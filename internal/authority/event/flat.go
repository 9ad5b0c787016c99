package event

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/contract"
)

// The operation ledger decodes every event of an Operation and of the worker hop it
// applies, several per governed action, and json.Unmarshal's reflection was a steady
// share of the authority's CPU and allocations per action (benchmarks/README.md, "CPU
// per action in both processes"). These decoders read the shape json.Marshal writes for
// these payloads directly: a flat object of known keys, each once, whose strings hold no
// escape and whose numbers are whole. A nested record (an Execution, a Source) is left
// to json.Unmarshal, and anything else at all — a null, an escape, an unknown key, a
// key in other letter case, a key twice, invalid text — sends the whole payload to
// json.Unmarshal, so each returns exactly what json.Unmarshal returns, error included
// (FuzzDecodeOperation, FuzzDecodeWorkClaimed, FuzzDecodeWorkReported).

// DecodeOperation is json.Unmarshal of b, the data of an Operation's event, into an
// [Operation].
func DecodeOperation(b []byte) (Operation, error) { return decodeFlat(b, operationFields[:]) }

// DecodeWorkClaimed is json.Unmarshal of b, the data of a [WorkClaimed] event.
func DecodeWorkClaimed(b []byte) (WorkClaimedData, error) {
	return decodeFlat(b, workClaimedFields[:])
}

// DecodeWorkReported is json.Unmarshal of b, the data of a [WorkReported] event.
func DecodeWorkReported(b []byte) (WorkReportedData, error) {
	return decodeFlat(b, workReportedFields[:])
}

// decodeFlat reads b with fields when it takes the shape, and otherwise, from a zero
// value again (fields may have filled part of it), with json.Unmarshal.
func decodeFlat[T any](b []byte, fields []flatField[T]) (T, error) {
	var d T
	if json.Valid(b) && readFlat(b, &d, fields) {
		return d, nil
	}
	d = *new(T)
	err := json.Unmarshal(b, &d)
	return d, err
}

// flatField is one key of a flat payload and how its value's text is read into the
// field of d it names, reporting whether the value took the shape.
type flatField[T any] struct {
	key  string
	read func(d *T, v []byte) bool
}

// The fields of each payload, in the order json.Marshal writes them (readFlat looks for
// each key after the last one first). The tables are read, never written.
var (
	operationFields = [...]flatField[Operation]{
		{"agent", func(d *Operation, v []byte) bool { return flatString(v, &d.Agent) }},
		{"ordinal", func(d *Operation, v []byte) bool { return flatInt(v, &d.Ordinal) }},
		{"tool", func(d *Operation, v []byte) bool { return flatString(v, &d.Tool) }},
		{"label", func(d *Operation, v []byte) bool { return flatString(v, &d.Label) }},
		{"input", func(d *Operation, v []byte) bool { return flatRaw(v, &d.Input) }},
		{"state", func(d *Operation, v []byte) bool { return flatString(v, &d.State) }},
		{"stage", func(d *Operation, v []byte) bool { return flatString(v, &d.Stage) }},
		{"decision", func(d *Operation, v []byte) bool { return flatString(v, &d.Decision) }},
		{"reason", func(d *Operation, v []byte) bool { return flatString(v, &d.Reason) }},
		{"reasonCode", func(d *Operation, v []byte) bool { return flatString(v, &d.ReasonCode) }},
		{"errorCode", func(d *Operation, v []byte) bool { return flatString(v, &d.ErrorCode) }},
		{"result", func(d *Operation, v []byte) bool { return flatRaw(v, &d.Result) }},
		{"execution", func(d *Operation, v []byte) bool {
			d.Execution = new(contract.ExecutionRequest)
			return readFlat(v, d.Execution, executionFields[:])
		}},
		{"retryOf", func(d *Operation, v []byte) bool { return flatInt(v, &d.RetryOf) }},
		{"attempt", func(d *Operation, v []byte) bool { return flatInt(v, &d.Attempt) }},
		{"traceParent", func(d *Operation, v []byte) bool { return flatString(v, &d.TraceParent) }},
	}
	executionFields = [...]flatField[contract.ExecutionRequest]{
		{"action", func(x *contract.ExecutionRequest, v []byte) bool { return flatString(v, &x.Action) }},
		{"caseId", func(x *contract.ExecutionRequest, v []byte) bool { return flatString(v, &x.CaseID) }},
		{"tool", func(x *contract.ExecutionRequest, v []byte) bool { return flatString(v, &x.Tool) }},
		{"kind", func(x *contract.ExecutionRequest, v []byte) bool { return flatString(v, &x.Kind) }},
		{"sourceTypes", func(x *contract.ExecutionRequest, v []byte) bool { return flatStrings(v, &x.SourceTypes) }},
		{"source", func(x *contract.ExecutionRequest, v []byte) bool { return flatString(v, &x.Source) }},
		{"approval", func(x *contract.ExecutionRequest, v []byte) bool { return flatString(v, &x.Approval) }},
		{"args", func(x *contract.ExecutionRequest, v []byte) bool { return flatArgs(v, &x.Args) }},
		{"bound", func(x *contract.ExecutionRequest, v []byte) bool { return flatStrings(v, &x.Bound) }},
	}
	workClaimedFields = [...]flatField[WorkClaimedData]{
		{"work", func(d *WorkClaimedData, v []byte) bool { return flatString(v, &d.Work) }},
		{"agent", func(d *WorkClaimedData, v []byte) bool { return flatString(v, &d.Agent) }},
		{"ordinal", func(d *WorkClaimedData, v []byte) bool { return flatInt(v, &d.Ordinal) }},
		{"connection", func(d *WorkClaimedData, v []byte) bool { return flatString(v, &d.Connection) }},
		{"workerId", func(d *WorkClaimedData, v []byte) bool { return flatString(v, &d.WorkerID) }},
		{"workerGeneration", func(d *WorkClaimedData, v []byte) bool { return flatInt(v, &d.Generation) }},
		{"grantDigest", func(d *WorkClaimedData, v []byte) bool { return flatString(v, &d.GrantDigest) }},
		{"source", func(d *WorkClaimedData, v []byte) bool {
			// A Source is left to json.Unmarshal, the object alone (a null to the whole
			// payload's).
			if v[0] != '{' {
				return false
			}
			d.Source = new(contract.Source)
			return json.Unmarshal(v, d.Source) == nil
		}},
	}
	workReportedFields = [...]flatField[WorkReportedData]{
		{"work", func(d *WorkReportedData, v []byte) bool { return flatString(v, &d.Work) }},
		{"digest", func(d *WorkReportedData, v []byte) bool { return flatString(v, &d.Digest) }},
		{"judged", func(d *WorkReportedData, v []byte) bool { return flatBool(v, &d.Judged) }},
		{"errorCode", func(d *WorkReportedData, v []byte) bool { return flatString(v, &d.Code) }},
		{"teaching", func(d *WorkReportedData, v []byte) bool { return flatString(v, &d.Teaching) }},
	}
)

// Each field of a table is a bit of readFlat's seen: a table of more than 32 does not
// compile.
const (
	_ = uint32(1) << (len(operationFields) - 1)
	_ = uint32(1) << (len(executionFields) - 1)
	_ = uint32(1) << (len(workClaimedFields) - 1)
	_ = uint32(1) << (len(workReportedFields) - 1)
)

// readFlat reads b, a JSON object inside text already found valid (json.Valid), into d
// by fields, and reports whether b took the shape: every key without escape, one of
// fields, each once, every value taken by its field's read. A key seen twice ends it
// false: json.Unmarshal keeps the last of a duplicate, where a read would keep the
// first. At most 32 fields (a bit each).
func readFlat[T any](b []byte, d *T, fields []flatField[T]) bool {
	var seen uint32
	next := 0 // where the key after the last one stands when the keys come in order
	return members(b, func(key, v []byte) bool {
		i := next
		if i >= len(fields) || fields[i].key != string(key) {
			if i = fieldIndex(fields, key); i < 0 {
				return false
			}
		}
		if bit := uint32(1) << i; seen&bit == 0 && fields[i].read(d, v) {
			seen |= bit
			next = i + 1
			return true
		}
		return false
	})
}

// fieldIndex is the index of the field of key, or -1.
func fieldIndex[T any](fields []flatField[T], key []byte) int {
	for i := range fields {
		if fields[i].key == string(key) {
			return i
		}
	}
	return -1
}

// members calls member with the key and the value's text of each member of b, a value
// inside text already found valid, in order, and reports whether b is an object, whose
// keys hold no escape, and member took every member. A key is given as its text between
// the quotes.
func members(b []byte, member func(key, v []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if b[i] == '}' {
		return true
	}
	for {
		// Valid text: a key string, a colon, a value, then a comma or the end.
		end := stringEnd(b, i)
		key := b[i+1 : end-1]
		// A key with an escape, or bytes that are not UTF-8 (json.Unmarshal reads them
		// as U+FFFD), is left to json.Unmarshal, as a value is (flatString).
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			return false
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // the colon
		vEnd := valueEnd(b, i)
		if !member(key, b[i:vEnd]) {
			return false
		}
		i = skipSpace(b, vEnd)
		if b[i] == '}' {
			return true
		}
		i = skipSpace(b, i+1) // the comma
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the offset just past the string that starts at b[i], in valid text.
func stringEnd(b []byte, i int) int {
	for j := i + 1; ; j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
}

// valueEnd returns the offset just past the value that starts at b[i], in valid text.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; ; j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// flatString sets *p to the string v holds, when it is a string without escapes whose
// bytes are UTF-8: those are json.Unmarshal's string as it stands. Anything else is left
// to json.Unmarshal (a null leaves a field as it was; invalid UTF-8 becomes U+FFFD).
func flatString[S ~string](v []byte, p *S) bool {
	if v[0] != '"' {
		return false
	}
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return false
	}
	*p = S(s)
	return true
}

// flatStrings sets *p to the list of strings v, a value inside valid text, holds, each
// as [flatString] takes it; a list, even an empty one, is a slice, as json.Unmarshal
// makes it.
func flatStrings(v []byte, p *[]string) bool {
	if v[0] != '[' {
		return false
	}
	out := []string{}
	i := skipSpace(v, 1)
	if v[i] == ']' {
		*p = out
		return true
	}
	for {
		end := valueEnd(v, i)
		var s string
		if !flatString(v[i:end], &s) {
			return false
		}
		out = append(out, s)
		i = skipSpace(v, end)
		if v[i] == ']' {
			*p = out
			return true
		}
		i = skipSpace(v, i+1) // the comma
	}
}

// flatArgs sets *p to the arguments v, a value inside valid text, holds, each value read
// by [contract.Value.UnmarshalJSON] as json.Unmarshal reads it into a fresh Value; a
// later key replaces an earlier one.
func flatArgs(v []byte, p *contract.Args) bool {
	if v[0] != '{' {
		return false
	}
	args := contract.Args{}
	ok := members(v, func(key, val []byte) bool {
		// A string without escapes is the Value UnmarshalJSON reads from it.
		var s string
		if flatString(val, &s) {
			args[string(key)] = contract.StringValue(s)
			return true
		}
		var x contract.Value
		if x.UnmarshalJSON(val) != nil {
			return false
		}
		args[string(key)] = x
		return true
	})
	*p = args
	return ok
}

// flatInt sets *p to the whole number v holds, as json.Unmarshal reads one into an int64.
func flatInt(v []byte, p *int64) bool {
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	*p = n
	return err == nil
}

func flatBool(v []byte, p *bool) bool {
	switch string(v) {
	case "true":
		*p = true
	case "false":
		*p = false
	default:
		return false
	}
	return true
}

// flatRaw sets *p to v as json.Unmarshal keeps a json.RawMessage: its own copy of the
// value's text. A null is left to json.Unmarshal.
func flatRaw(v []byte, p *json.RawMessage) bool {
	if v[0] == 'n' {
		return false
	}
	*p = bytes.Clone(v)
	return true
}
