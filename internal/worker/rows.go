package worker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// MaxRows bounds the rows one call may return.
const MaxRows = 10000

// Rows decodes adapter output into rows: a JSON object is one row, an array of objects is
// one row each, and with lines set, each non-empty line is one object (JSON Lines).
// Columns keep strings, integers (within ±2^53−1), floats and booleans as they are; a
// null column is left out; a nested object or array becomes its compact JSON text, so
// nothing is lost and nothing is guessed.
func Rows(b []byte, lines bool) ([]contract.Args, error) {
	var raws []json.RawMessage
	switch {
	case lines:
		for _, line := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				raws = append(raws, json.RawMessage(line))
			}
		}
	case len(bytes.TrimSpace(b)) > 0 && bytes.TrimSpace(b)[0] == '[':
		if err := contract.DecodeStrict(b, &raws); err != nil {
			return nil, fmt.Errorf("rows are not a JSON array: %w", err)
		}
	default:
		raws = []json.RawMessage{b}
	}
	if len(raws) > MaxRows {
		return nil, contract.Errorf(contract.CodeOutputTooBig, "the tool returned %d rows, over the cap of %d; return fewer.", len(raws), MaxRows)
	}
	rows := make([]contract.Args, 0, len(raws))
	for i, raw := range raws {
		row, err := Row(raw)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Row decodes one JSON object into a row, as [Rows] describes.
func Row(raw []byte) (contract.Args, error) {
	if m, ok := contract.ScalarObject(raw); ok {
		return RowFromMap(m) // a row of scalars, read once; the rest is read as below
	}
	if err := contract.CheckJSON(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("a row is not a JSON object")
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after a row")
	}
	return RowFromMap(m)
}

// RowFromMap converts decoded JSON (numbers as json.Number or float64) into a row.
func RowFromMap(m map[string]any) (contract.Args, error) {
	row := make(contract.Args, len(m))
	for k, v := range m {
		val, keep, err := scalar(v)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", k, err)
		}
		if keep {
			row[k] = val
		}
	}
	return row, nil
}

func scalar(v any) (contract.Value, bool, error) {
	switch x := v.(type) {
	case nil:
		return contract.Value{}, false, nil
	case string:
		return contract.StringValue(x), true, nil
	case bool:
		return contract.BoolValue(x), true, nil
	case json.Number:
		s := x.String()
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil && i <= contract.MaxExactInt && i >= -contract.MaxExactInt {
				val, err := contract.IntValue(i)
				return val, true, err
			}
			// An integer too large to be exact travels as its decimal text.
			return contract.StringValue(s), true, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return contract.Value{}, false, err
		}
		val, err := contract.FloatValue(f)
		return val, true, err
	case float64:
		if x == float64(int64(x)) && x <= contract.MaxExactInt && x >= -contract.MaxExactInt {
			val, err := contract.IntValue(int64(x))
			return val, true, err
		}
		val, err := contract.FloatValue(x)
		return val, true, err
	case int64:
		val, err := contract.IntValue(x)
		return val, true, err
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return contract.Value{}, false, err
		}
		return contract.StringValue(string(b)), true, nil
	}
}
