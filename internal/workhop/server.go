package workhop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/httpstatus"
)

// DefaultMaxBody bounds a /work body in bytes: a report carries at most the result
// rows an adapter may return.
const DefaultMaxBody = 4 << 20

// connectionAuthenticator is the part of the identity directory that proves a Connection
// key and ends a poll held open once the key no longer proves its Connection. A key
// proved once is proved again without the Connection's row ([identity.Directory.ConnectionOf]):
// each hop call checks that its Connection lives in its project's log.
type connectionAuthenticator interface {
	ConnectionOf(ctx context.Context, key identity.Token) (contract.Connection, error)
	Hold(ctx context.Context, tok identity.Token) (context.Context, func())
}

// dispatcher is the part of the Dispatcher that answers the five hop operations.
type dispatcher interface {
	Poll(ctx context.Context, conn contract.Connection, req contract.PollRequest) (contract.WorkAnswer, error)
	RenewLease(ctx context.Context, conn contract.Connection, req contract.LeaseRequest) (contract.WorkAnswer, error)
	ReleaseLease(ctx context.Context, conn contract.Connection, req contract.LeaseRequest) (contract.WorkAnswer, error)
	Claim(ctx context.Context, conn contract.Connection, req contract.ClaimRequest) (contract.WorkAnswer, error)
	Report(ctx context.Context, conn contract.Connection, req contract.ReportRequest) (contract.WorkAnswer, error)
}

// Observer sees each hop operation; serve's telemetry satisfies it. StartWork returns
// the context to answer in and the function called with the answer before it is sent.
type Observer interface {
	StartWork(ctx context.Context, h http.Header, kind string, conn contract.Connection) (context.Context, func(*contract.WorkAnswer, error))
}

// Config holds what a [Server] needs. Identity and Dispatcher are required.
type Config struct {
	Identity   connectionAuthenticator // *identity.Directory satisfies it
	Dispatcher dispatcher              // *operation.Dispatcher satisfies it
	Logger     *slog.Logger            // default: discards
	MaxBody    int64                   // bytes; default DefaultMaxBody
	Observer   Observer                // default: none
}

// Server serves POST /work. It is safe for concurrent use.
type Server struct {
	auth    connectionAuthenticator
	disp    dispatcher
	log     *slog.Logger
	maxBody int64
	obs     Observer
	mux     *http.ServeMux
	polls   *pollMemo // the Poll bodies decoded lately
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Identity == nil || cfg.Dispatcher == nil {
		return nil, errors.New("workhop: config needs the identity directory and a dispatcher")
	}
	s := &Server{auth: cfg.Identity, disp: cfg.Dispatcher, log: cfg.Logger, maxBody: cfg.MaxBody, obs: cfg.Observer, mux: http.NewServeMux(), polls: newPollMemo()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.With(logComponent, "workhop")
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	s.mux.HandleFunc("POST /work", s.handleWork)
	return s, nil
}

// ServeHTTP routes POST /work.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// handleWork authenticates the Connection key, decodes one hop operation strictly and
// answers it. Every answer is a [contract.WorkAnswer], refusals included.
func (s *Server) handleWork(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		s.refuse(w, r, contract.Errorf(contract.CodeUnauthenticated, "POST /work needs Authorization: Bearer <connection key>; start the worker with DOCKET_CONNECTION_KEY or --key-file."))
		return
	}
	conn, err := s.auth.ConnectionOf(ctx, identity.Token(key))
	if err != nil {
		s.refuse(w, r, err)
		return
	}
	// The call runs under the key: a long-poll ends, refused, when the Connection is
	// revoked (docs/security.md, "Credentials and streams").
	ctx, held := s.auth.Hold(ctx, identity.Token(key))
	defer held()
	body, err := readBody(w, r, s.maxBody)
	if err != nil {
		s.refuse(w, r, err)
		return
	}
	var in contract.WorkBody
	if err := s.polls.decodeBody(body, &in); err != nil {
		if code := contract.CodeOf(err); code == "" || code == contract.CodeInvalidArgument {
			err = contract.Errorf(contract.CodeWorkBody, "the /work body is not {\"operation\": {\"kind\": …}} (%v); send one operation as docs/workers.md describes it.", err)
		}
		s.refuse(w, r, err)
		return
	}
	var done func(*contract.WorkAnswer, error)
	if s.obs != nil {
		ctx, done = s.obs.StartWork(ctx, r.Header, in.Operation.Kind, conn)
	}
	ans, err := s.answer(ctx, conn, in.Operation)
	if ended := identity.CredentialEnded(ctx); err != nil && ended != nil {
		err = ended // the key was revoked while the call waited: say so, not what the wait's end made of it
	}
	if done != nil {
		done(&ans, err)
	}
	if err != nil {
		s.log.DebugContext(ctx, "work refused", logKind, in.Operation.Kind, logConnection, conn.ID, logErr, err)
		s.refuse(w, r, err)
		return
	}
	if isAccepted(ans) {
		// Every accepted Claim and Report is answered so: its bytes are json.Marshal's
		// of it, written without encoding it each time.
		jsonHeaders(w, http.StatusOK)
		io.WriteString(w, acceptedBody)
		return
	}
	if err := writeJSON(w, http.StatusOK, ans); err != nil {
		s.refuse(w, r, err)
	}
}

// acceptedBody is writeJSON's body for an answer that only accepts (isAccepted).
const acceptedBody = "{\"accepted\":true}\n"

// isAccepted reports whether a is the answer that accepts and says nothing more, which
// json.Marshal writes as acceptedBody.
func isAccepted(a contract.WorkAnswer) bool {
	return a.Accepted && a.Code == "" && a.Teaching == "" && a.Lease == nil && len(a.Work) == 0
}

func (s *Server) answer(ctx context.Context, conn contract.Connection, op contract.WorkOperation) (contract.WorkAnswer, error) {
	switch op.Kind {
	case contract.WorkPoll:
		return s.disp.Poll(ctx, conn, *op.Poll)
	case contract.WorkRenewLease:
		return s.disp.RenewLease(ctx, conn, *op.RenewLease)
	case contract.WorkReleaseLease:
		return s.disp.ReleaseLease(ctx, conn, *op.ReleaseLease)
	case contract.WorkClaim:
		return s.disp.Claim(ctx, conn, *op.Claim)
	case contract.WorkReport:
		return s.disp.Report(ctx, conn, *op.Report)
	}
	return contract.WorkAnswer{}, contract.Errorf(contract.CodeWorkBody, "work operation kind %.40q is unknown; use Poll, RenewLease, ReleaseLease, Claim or Report.", op.Kind)
}

// readBody reads a bounded JSON body.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, contract.Errorf(contract.CodeUnsupportedMedia, "send the body as application/json.")
	}
	b, err := readAll(http.MaxBytesReader(w, r.Body, limit), r.ContentLength, limit)
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return nil, contract.Errorf(contract.CodeBodyTooLarge, "the body is over %d bytes; report fewer rows.", limit)
	}
	if err != nil {
		return nil, contract.Errorf(contract.CodeWorkBody, "the body could not be read; send it again.")
	}
	return b, nil
}

// readAll is io.ReadAll into a buffer sized for the body when its length is known and
// within limit: io.ReadAll starts at 512 bytes and grows, copying, through every size up
// to a Claim's or a Report's (a grant alone is ≈ 700 bytes), on every hop call.
func readAll(r io.Reader, length, limit int64) ([]byte, error) {
	size := int64(512)
	if length > 0 && length < limit {
		size = length + 1 // one more, for the read that finds the end
	}
	b := make([]byte, 0, size)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append pick the next size
		}
	}
}

// statusOf is the one mapping from hop error codes to HTTP statuses. A worker reads the
// code from the answer; the status is for proxies and people. Codes every HTTP edge
// answers alike take [httpstatus.Of]; the hop's own refusals are listed here.
func statusOf(code contract.Code) int {
	if status, ok := httpstatus.Of(code); ok {
		return status
	}
	switch code {
	case contract.CodeWorkBody, contract.CodeWorkerID, contract.CodeInvalidArgument, contract.CodeGrantMalformed:
		return http.StatusBadRequest
	}
	// Leases, claims, grants and reports: the state refuses the call.
	return http.StatusConflict
}

// refuse answers err as a refused [contract.WorkAnswer]. An error without a code is the
// authority's own failure: its cause is logged and never sent.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	ce, ok := errors.AsType[*contract.Error](err)
	if !ok {
		if r.Context().Err() != nil {
			return // the worker went away; it never reads this answer
		}
		s.log.ErrorContext(r.Context(), "work failed", logErr, err)
		ce = contract.Errorf(contract.CodeInternal, "the authority failed to handle this call; its log has the cause, and the call may be sent again.")
	}
	status := statusOf(ce.Code)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="docket-work"`)
	}
	if err := writeJSON(w, status, contract.WorkAnswer{Code: ce.Code, Teaching: ce.Teaching}); err != nil {
		s.log.ErrorContext(r.Context(), "work refusal not sent", logErr, err)
		http.Error(w, `{"errorCode":"internal"}`, http.StatusInternalServerError)
	}
}

// writeJSON sends v as JSON with status. v is encoded before anything is sent, so an
// encoding error is returned while the status can still say so; a failed write is a
// worker that went away.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode work answer: %w", err)
	}
	jsonHeaders(w, status)
	w.Write(append(body, '\n'))
	return nil
}

// jsonHeaders sends the headers of a JSON answer with status.
func jsonHeaders(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
}
