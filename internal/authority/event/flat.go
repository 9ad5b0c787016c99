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
func DecodeOperation(b []byte) (Operation, error) { return decodeFlat(b, operationFlat) }

// DecodeWorkClaimed is json.Unmarshal of b, the data of a [WorkClaimed] event.
func DecodeWorkClaimed(b []byte) (WorkClaimedData, error) { return decodeFlat(b, workClaimedFlat) }

// DecodeWorkReported is json.Unmarshal of b, the data of a [WorkReported] event.
func DecodeWorkReported(b []byte) (WorkReportedData, error) {
	return decodeFlat(b, workReportedFlat)
}

// decodeFlat reads b with flat when it takes the shape, and otherwise, from a zero value
// again (flat may have filled part of it), with json.Unmarshal.
func decodeFlat[T any](b []byte, flat func(b []byte, d *T) bool) (T, error) {
	var d T
	if flat(b, &d) {
		return d, nil
	}
	d = *new(T)
	err := json.Unmarshal(b, &d)
	return d, err
}

func operationFlat(b []byte, d *Operation) bool {
	return eachMemberOnce(b, func(key, v []byte) (bit uint32, ok bool) {
		ok = true
		switch string(key) {
		case "agent":
			bit = 1 << 0
			d.Agent, ok = flatString(v)
		case "ordinal":
			bit = 1 << 1
			d.Ordinal, ok = flatInt(v)
		case "tool":
			bit = 1 << 2
			d.Tool, ok = flatString(v)
		case "label":
			bit = 1 << 3
			d.Label, ok = flatString(v)
		case "input":
			bit = 1 << 4
			d.Input, ok = flatRaw(v)
		case "state":
			bit = 1 << 5
			var s string
			s, ok = flatString(v)
			d.State = contract.OperationState(s)
		case "stage":
			bit = 1 << 6
			var s string
			s, ok = flatString(v)
			d.Stage = contract.OperationStage(s)
		case "decision":
			bit = 1 << 7
			d.Decision, ok = flatString(v)
		case "reason":
			bit = 1 << 8
			d.Reason, ok = flatString(v)
		case "reasonCode":
			bit = 1 << 9
			var s string
			s, ok = flatString(v)
			d.ReasonCode = contract.Code(s)
		case "errorCode":
			bit = 1 << 10
			var s string
			s, ok = flatString(v)
			d.ErrorCode = contract.Code(s)
		case "result":
			bit = 1 << 11
			d.Result, ok = flatRaw(v)
		case "execution":
			bit = 1 << 12
			d.Execution = new(contract.ExecutionRequest)
			ok = executionFlat(v, d.Execution)
		case "retryOf":
			bit = 1 << 13
			d.RetryOf, ok = flatInt(v)
		case "attempt":
			bit = 1 << 14
			d.Attempt, ok = flatInt(v)
		case "traceParent":
			bit = 1 << 15
			d.TraceParent, ok = flatString(v)
		default:
			return 0, false
		}
		return bit, ok
	})
}

// executionFlat reads b, a value inside valid text, into x as json.Unmarshal would,
// when it takes the shape.
func executionFlat(b []byte, x *contract.ExecutionRequest) bool {
	return membersOnce(b, func(key, v []byte) (bit uint32, ok bool) {
		ok = true
		switch string(key) {
		case "action":
			bit = 1 << 0
			x.Action, ok = flatString(v)
		case "caseId":
			bit = 1 << 1
			var s string
			s, ok = flatString(v)
			x.CaseID = contract.CaseID(s)
		case "tool":
			bit = 1 << 2
			x.Tool, ok = flatString(v)
		case "kind":
			bit = 1 << 3
			x.Kind, ok = flatString(v)
		case "sourceTypes":
			bit = 1 << 4
			x.SourceTypes, ok = flatStrings(v)
		case "source":
			bit = 1 << 5
			x.Source, ok = flatString(v)
		case "approval":
			bit = 1 << 6
			x.Approval, ok = flatString(v)
		case "args":
			bit = 1 << 7
			x.Args, ok = flatArgs(v)
		case "bound":
			bit = 1 << 8
			x.Bound, ok = flatStrings(v)
		default:
			return 0, false
		}
		return bit, ok
	})
}

func workClaimedFlat(b []byte, d *WorkClaimedData) bool {
	return eachMemberOnce(b, func(key, v []byte) (bit uint32, ok bool) {
		ok = true
		switch string(key) {
		case "work":
			bit = 1 << 0
			d.Work, ok = flatString(v)
		case "agent":
			bit = 1 << 1
			d.Agent, ok = flatString(v)
		case "ordinal":
			bit = 1 << 2
			d.Ordinal, ok = flatInt(v)
		case "connection":
			bit = 1 << 3
			var s string
			s, ok = flatString(v)
			d.Connection = contract.ConnectionID(s)
		case "workerId":
			bit = 1 << 4
			d.WorkerID, ok = flatString(v)
		case "workerGeneration":
			bit = 1 << 5
			d.Generation, ok = flatInt(v)
		case "grantDigest":
			bit = 1 << 6
			d.GrantDigest, ok = flatString(v)
		case "source":
			bit = 1 << 7
			if ok = v[0] == '{'; ok {
				d.Source = new(contract.Source)
				ok = json.Unmarshal(v, d.Source) == nil
			}
		default:
			return 0, false
		}
		return bit, ok
	})
}

func workReportedFlat(b []byte, d *WorkReportedData) bool {
	return eachMemberOnce(b, func(key, v []byte) (bit uint32, ok bool) {
		ok = true
		switch string(key) {
		case "work":
			bit = 1 << 0
			d.Work, ok = flatString(v)
		case "digest":
			bit = 1 << 1
			d.Digest, ok = flatString(v)
		case "judged":
			bit = 1 << 2
			d.Judged, ok = flatBool(v)
		case "errorCode":
			bit = 1 << 3
			var s string
			s, ok = flatString(v)
			d.Code = contract.Code(s)
		case "teaching":
			bit = 1 << 4
			d.Teaching, ok = flatString(v)
		default:
			return 0, false
		}
		return bit, ok
	})
}

// eachMemberOnce calls member with the key and the value's text of each member of b, a
// JSON object, in order, and reports whether b is valid JSON, an object, whose keys hold
// no escape, and member took every member, each key once. Keys are given as their text
// between the quotes; member names the key's own bit and whether it took the value. A
// key seen twice ends it false: json.Unmarshal keeps the last of a duplicate, where a
// decoder would keep the first.
func eachMemberOnce(b []byte, member func(key, v []byte) (bit uint32, ok bool)) bool {
	return json.Valid(b) && membersOnce(b, member)
}

// membersOnce is eachMemberOnce of b, a value inside text already found valid.
func membersOnce(b []byte, member func(key, v []byte) (bit uint32, ok bool)) bool {
	var seen uint32
	return members(b, func(key, v []byte) bool {
		bit, ok := member(key, v)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
}

// members calls member with each member of b, a value inside text already found valid
// (eachMemberOnce).
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

// flatString is the string v holds, when it is a string without escapes whose bytes
// are UTF-8: those are json.Unmarshal's string as it stands. Anything else is left to
// json.Unmarshal (a null leaves a field as it was; invalid UTF-8 becomes U+FFFD).
func flatString(v []byte) (string, bool) {
	if v[0] != '"' {
		return "", false
	}
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return "", false
	}
	return string(s), true
}

// flatStrings is the list of strings v, a value inside valid text, holds, each as [flatString] takes it; a list,
// even an empty one, is a slice, as json.Unmarshal makes it.
func flatStrings(v []byte) ([]string, bool) {
	if v[0] != '[' {
		return nil, false
	}
	out := []string{}
	i := skipSpace(v, 1)
	if v[i] == ']' {
		return out, true
	}
	for {
		end := valueEnd(v, i)
		s, ok := flatString(v[i:end])
		if !ok {
			return nil, false
		}
		out = append(out, s)
		i = skipSpace(v, end)
		if v[i] == ']' {
			return out, true
		}
		i = skipSpace(v, i+1) // the comma
	}
}

// flatArgs is the arguments v, a value inside valid text, holds, each value read by [contract.Value.UnmarshalJSON]
// as json.Unmarshal reads it into a fresh Value; a later key replaces an earlier one.
func flatArgs(v []byte) (contract.Args, bool) {
	if v[0] != '{' {
		return nil, false
	}
	args := contract.Args{}
	ok := members(v, func(key, val []byte) bool {
		// A string without escapes is the Value UnmarshalJSON reads from it.
		if s, ok := flatString(val); ok {
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
	return args, ok
}

// flatInt is the whole number v holds, as json.Unmarshal reads one into an int64.
func flatInt(v []byte) (int64, bool) {
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

func flatBool(v []byte) (bool, bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// flatRaw is v as json.Unmarshal keeps a json.RawMessage: its own copy of the value's
// text. A null is left to json.Unmarshal.
func flatRaw(v []byte) (json.RawMessage, bool) {
	if v[0] == 'n' {
		return nil, false
	}
	return bytes.Clone(v), true
}
