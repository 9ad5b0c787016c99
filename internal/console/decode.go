package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"

	"github.com/docketrun/docket/internal/contract"
)

// decodeJSON reads r's body, bounded to limit bytes, as exactly one JSON value of type T.
// Unknown fields, trailing data and a body that is not JSON are refused with codes that
// say what to fix.
func decodeJSON[T any](w http.ResponseWriter, r *http.Request, limit int64) (T, error) {
	var v T
	if err := checkJSONType(r); err != nil {
		return v, err
	}
	err := decodeStrict(http.MaxBytesReader(w, r.Body, limit), &v)
	if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return v, errBodyTooLarge(mbe)
	}
	return v, err
}

// readJSON reads r's body whole, bounded to limit bytes, without decoding it: a
// delegate's card keeps the call's body for the handler that decodes it when the card is
// confirmed.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if err := checkJSONType(r); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return nil, errBodyTooLarge(mbe)
	}
	if err != nil {
		return nil, &contract.Error{Code: contract.CodeInvalidArgument, Err: err, Teaching: "the request body could not be read; send it again."}
	}
	return b, nil
}

// checkJSONType refuses a body whose Content-Type is set and is not JSON.
func checkJSONType(r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return contract.Errorf(contract.CodeUnsupportedMedia, "the request body must be JSON; send Content-Type: application/json.")
		}
	}
	return nil
}

func errBodyTooLarge(mbe *http.MaxBytesError) error {
	return &contract.Error{Code: contract.CodeBodyTooLarge, Err: mbe, Teaching: fmt.Sprintf("the request body is over %d bytes; send less.", mbe.Limit)}
}

// decodeStrict decodes one JSON value from rd into v with [contract.DecodeStrict]:
// unknown fields, duplicate and case-variant keys, null for a typed field, invalid UTF-8
// and anything after the value are refused. It is the part of decodeJSON that fuzzing
// reaches.
func decodeStrict(rd io.Reader, v any) error {
	b, err := io.ReadAll(rd)
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return mbe
		}
		return &contract.Error{Code: contract.CodeInvalidArgument, Err: err, Teaching: "the request body could not be read; send it again."}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return contract.Errorf(contract.CodeInvalidArgument, "the request body is empty; send a JSON object.")
	}
	if err := contract.DecodeStrict(b, v); err != nil {
		if _, ok := errors.AsType[*contract.Error](err); ok {
			return err
		}
		return &contract.Error{Code: contract.CodeInvalidArgument, Err: err,
			Teaching: fmt.Sprintf("the request body is not the expected JSON: %s.", jsonProblem(err))}
	}
	return nil
}

// jsonProblem describes a decoding error without echoing the body.
func jsonProblem(err error) string {
	if de, ok := errors.AsType[*contract.DecodeError](err); ok {
		return de.Error() // the line, the key and the fix, in words
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Sprintf("field %q wants a %s", te.Field, te.Type)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "it ends early"
	}
	// DisallowUnknownFields reports `json: unknown field "x"`; the field name is the
	// caller's own text, already quoted.
	return err.Error()
}

// queryInt reads an optional non-negative integer query parameter.
func queryInt(r *http.Request, name string) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, contract.Errorf(contract.CodeInvalidArgument, "query parameter %s=%q is not a non-negative integer.", name, s)
	}
	return n, nil
}

// maxPage is the largest page a list returns, in items.
const maxPage = 500

// maxPageBytes bounds a page's encoded items: a page ends before the item that would take
// it past this, so a list of large items (tasks of 64 KiB) is answered in pages of about a
// MiB, never in one answer of every item (docs/security.md, "Bounds"). A page holds one
// item at least.
const maxPageBytes = 1 << 20

// paginate returns the page of items after the cursor ?after= (the key of the last item of
// the page before), of at most ?limit= entries (default and cap maxPage) and about
// maxPageBytes; Next is the key of its last item when more follow. The cursor is found by
// its key, so items may be in any order that holds from one page to the next (tasks are
// listed as posted); when the item it names is gone, a list sorted by key goes on after
// where it stood.
func paginate[T any](r *http.Request, items []T, key func(T) string) (contract.Page[T], error) {
	limit, err := queryInt(r, "limit")
	if err != nil {
		return contract.Page[T]{}, err
	}
	if limit == 0 || limit > maxPage {
		limit = maxPage
	}
	start := 0
	if after := r.URL.Query().Get("after"); after != "" {
		if i := slices.IndexFunc(items, func(it T) bool { return key(it) == after }); i >= 0 {
			start = i + 1
		} else {
			for start < len(items) && key(items[start]) <= after {
				start++
			}
		}
	}
	end, size := start, 0
	for end < len(items) && end-start < int(limit) {
		b, err := json.Marshal(items[end])
		if err != nil {
			return contract.Page[T]{}, fmt.Errorf("measure a page's item: %w", err)
		}
		if end > start && size+len(b) > maxPageBytes {
			break
		}
		size += len(b)
		end++
	}
	p := contract.Page[T]{Items: items[start:end]}
	if p.Items == nil {
		p.Items = []T{}
	}
	if end < len(items) {
		p.Next = key(items[end-1])
	}
	return p, nil
}
