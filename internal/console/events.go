package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
)

// eventBackend is the part of the authority the event routes need: pages of the log, its chain check and a wait for what comes next.
type eventBackend interface {
	Events(ctx context.Context, c identity.Caller, project contract.ProjectID, after int64, limit int) ([]contract.Event, error)
	// FollowEvents is Events for the stream, which may be answered a page that ends
	// before the log's head and reads on after its wait.
	FollowEvents(ctx context.Context, c identity.Caller, project contract.ProjectID, after int64, limit int) ([]contract.Event, error)
	VerifyEvents(ctx context.Context, c identity.Caller, project contract.ProjectID) (contract.ChainReport, error)
	Checkpoint(ctx context.Context, c identity.Caller, project contract.ProjectID) (signing.Checkpoint, error)
	WaitEvents(ctx context.Context, c identity.Caller, project contract.ProjectID, after int64) error
}

// handleEvents returns one page of a project's log after ?after=N, or
// of the events the filters ?type=, ?case=, ?agent= and ?since= select.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) error {
	after, err := queryInt(r, "after")
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	if f, agent, ok, err := eventFilter(r); err != nil {
		return err
	} else if ok {
		return s.writeFilteredEvents(w, r, after, limit, f, agent)
	}
	es, err := s.auth.Events(r.Context(), caller(r), project(r), after, int(min(limit, maxPage)))
	if err != nil {
		return err
	}
	p := contract.Page[contract.Event]{Items: es}
	if len(es) > 0 && (limit == 0 || len(es) == int(min(limit, maxPage))) {
		p.Next = strconv.FormatInt(es[len(es)-1].Seq, 10)
	}
	return writeJSON(w, http.StatusOK, p)
}

func (s *Server) handleVerifyEvents(w http.ResponseWriter, r *http.Request) error {
	rep, err := s.auth.VerifyEvents(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rep)
}

// handleCheckpoint signs the project's head now, on a member's demand, and answers the
// signed checkpoint it appended to the log.
func (s *Server) handleCheckpoint(w http.ResponseWriter, r *http.Request) error {
	cp, err := s.auth.Checkpoint(r.Context(), caller(r), project(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, cp)
}

// handleEventStream streams a project's events as server-sent events: each carries its
// sequence number as id:, so a client resumes with Last-Event-ID (which wins) or
// ?after=N. ?project= names the project; default "default".
func (s *Server) handleEventStream(w http.ResponseWriter, r *http.Request) error {
	p := contract.ProjectID(r.URL.Query().Get("project"))
	if p == "" {
		p = "default"
	}
	after, err := queryInt(r, "after")
	if err != nil {
		return err
	}
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 0 {
			return contract.Errorf(contract.CodeInvalidArgument, "Last-Event-ID %q is not an event sequence number.", id)
		}
		after = n
	}
	ctx := r.Context() // held under the request's credential: it ends when the credential does
	c := caller(r)
	// The first read checks access and the cursor before the stream's headers commit.
	es, err := s.auth.Events(ctx, c, p, after, maxPage)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return nil // the client went away
	}
	for {
		for _, e := range es {
			if err := writeEvent(w, e); err != nil {
				return nil
			}
			after = e.Seq
		}
		if len(es) > 0 {
			if err := rc.Flush(); err != nil {
				return nil
			}
		}
		if len(es) < maxPage {
			if err := s.waitOrPing(ctx, w, rc, p, after); err != nil {
				return nil // the stream ends when the client leaves or the server shuts down
			}
		}
		// The stream reads on after its wait, so it takes the events this process
		// committed from memory rather than the store (FollowEvents).
		if es, err = s.auth.FollowEvents(ctx, c, p, after, maxPage); err != nil {
			s.log.WarnContext(ctx, "event stream ended", logErr, err)
			return nil
		}
	}
}

// waitOrPing waits for an event after after; while none comes it writes a comment every
// keep-alive period, so proxies and clients see the stream is alive.
func (s *Server) waitOrPing(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, p contract.ProjectID, after int64) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, s.keepAlive)
		err := s.auth.WaitEvents(wctx, callerFrom(ctx), p, after)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
			return err
		}
		if err := rc.Flush(); err != nil {
			return err
		}
	}
}

// writeEvent writes one server-sent event. JSON has no raw newlines, so data is one line.
func writeEvent(w http.ResponseWriter, e contract.Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, b)
	return err
}
