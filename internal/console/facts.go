package console

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// factBackend is the part of the authority a search of the Board's facts needs.
type factBackend interface {
	Facts(ctx context.Context, c identity.Caller, project contract.ProjectID, pattern contract.Atom, limit int) (contract.Bounded[contract.Node], error)
}

// handleFacts searches the Board's facts: ?predicate= names the predicate (none: every
// fact), each ?arg=name=value fixes one argument (a JSON value, else a string; ?x is a
// variable), and ?limit= bounds the answer.
func (s *Server) handleFacts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	pattern, err := factPattern(q.Get("predicate"), q["arg"])
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	out, err := s.auth.Facts(r.Context(), caller(r), project(r), pattern, int(limit))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// factPattern reads the pattern of a fact search: a predicate and its arguments, each
// name=value.
func factPattern(predicate string, args []string) (contract.Atom, error) {
	p := contract.Atom{Predicate: strings.TrimSpace(predicate)}
	for _, a := range args {
		if strings.TrimSpace(a) == "" {
			continue
		}
		name, raw, ok := strings.Cut(a, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return contract.Atom{}, contract.Errorf(contract.CodeInvalidArgument,
				"the argument %q is not name=value, such as job_id=calc-001.", a)
		}
		if p.Predicate == "" {
			return contract.Atom{}, contract.Errorf(contract.CodeInvalidArgument,
				"the argument %q needs a predicate to belong to; name one with predicate=.", a)
		}
		if p.Args == nil {
			p.Args = contract.Args{}
		}
		p.Args[name] = argValue(strings.TrimSpace(raw))
	}
	return p, nil
}

// argValue reads one argument as a person types it: a JSON number, boolean or quoted
// string is that value, anything else the string as typed.
func argValue(raw string) contract.Value {
	var v contract.Value
	if err := json.Unmarshal([]byte(raw), &v); err == nil {
		return v
	}
	return contract.StringValue(raw)
}
