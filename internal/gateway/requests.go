package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/contract"
)

// Routes of [Requests], for the console's mux (DESIGN.md §7.1).
const (
	RouteRequests = "GET /api/v1/projects/{project}/requests"
	RouteDecision = "POST /api/v1/projects/{project}/requests/{id}/decision"
)

// decider lists and decides Requests.
type decider interface {
	Requests(ctx context.Context, c authority.Caller, project contract.ProjectID) ([]contract.Request, error)
	Decide(ctx context.Context, c authority.Caller, project contract.ProjectID, id contract.RequestID, d contract.Decision) (contract.Request, error)
}

// Requests is the REST face of Requests and decisions: [RouteRequests] lists a
// project's Requests with their canonical arguments and digest, [RouteDecision] decides
// one. Callers authenticate with a member's bearer token. Mount it on both routes; it is
// safe for concurrent use.
type Requests struct {
	auth authenticator
	dec  decider
	log  *slog.Logger
	mux  *http.ServeMux
}

// NewRequests returns the Requests handler.
func NewRequests(auth authenticator, dec decider, log *slog.Logger) *Requests {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Requests{auth: auth, dec: dec, log: log.With(logComponent, "requests"), mux: http.NewServeMux()}
	h.mux.HandleFunc(RouteRequests, h.wrap(h.handleList))
	h.mux.HandleFunc(RouteDecision, h.wrap(h.handleDecide))
	return h
}

func (h *Requests) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// maxDecisionBody bounds a decision's body.
const maxDecisionBody = 16 << 10

func (h *Requests) wrap(fn func(w http.ResponseWriter, r *http.Request, c authority.Caller) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		c, err := h.auth.Authenticate(r.Context(), authority.Token(tok))
		if err == nil {
			err = fn(w, r, c)
		}
		if err != nil {
			h.writeError(w, r, err)
		}
	}
}

func (h *Requests) handleList(w http.ResponseWriter, r *http.Request, c authority.Caller) error {
	rs, err := h.dec.Requests(r.Context(), c, contract.ProjectID(r.PathValue("project")))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, contract.Page[contract.Request]{Items: rs})
}

func (h *Requests) handleDecide(w http.ResponseWriter, r *http.Request, c authority.Caller) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxDecisionBody))
	dec.DisallowUnknownFields()
	var d contract.Decision
	if err := dec.Decode(&d); err != nil {
		return &contract.Error{Code: contract.CodeInvalidArgument, Err: err,
			Teaching: `send one JSON object {"digest": "sha256:…", "verdict": "approve"|"deny", "reason": "…"}`}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return contract.Errorf(contract.CodeInvalidArgument, "the decision has data after its closing brace; send exactly one JSON object")
	}
	got, err := h.dec.Decide(r.Context(), c, contract.ProjectID(r.PathValue("project")), contract.RequestID(r.PathValue("id")), d)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, got)
}

// writeError sends err as {"errorCode", "teaching"}; an uncoded error is logged and sent
// as internal, without its cause.
func (h *Requests) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ce, ok := errors.AsType[*contract.Error](err)
	if !ok {
		h.log.ErrorContext(r.Context(), "request failed", logErr, err)
		ce = contract.Errorf(contract.CodeInternal, "the authority failed to handle this request; its log has the cause.")
	}
	status := contract.HTTPStatus(ce.Code)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="docket"`)
	}
	writeJSON(w, status, contract.Error{Code: ce.Code, Teaching: ce.Teaching})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(append(b, '\n'))
	return err
}
