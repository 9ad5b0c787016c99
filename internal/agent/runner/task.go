package runner

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
)

// Bounds of the task endpoint.
const (
	maxTaskBody     = 1 << 20          // bytes of one POST /task body
	taskReadHeader  = 10 * time.Second // how long a client may take to send its headers
	taskShutdownFor = 10 * time.Second // how long a running task may take to finish at shutdown
	wakeBound       = 24 * time.Hour   // how long a served conversation waits for its pending outcomes
)

// TaskRequest is the body of POST /task, the task endpoint of docket agent serve.
type TaskRequest struct {
	Text        string          `json:"text"`
	CaseType    string          `json:"caseType,omitempty"`
	BusinessKey json.RawMessage `json:"businessKey,omitempty"`
	SessionKey  string          `json:"sessionKey,omitempty"` // the same key continues the same conversation; omitted: one is made and returned
}

// ClosedCase is a Case a task closed: its id, root and disposition. Dispositions are
// listed each as it is, never summed up.
type ClosedCase struct {
	CaseID      contract.CaseID      `json:"caseId"`
	Root        string               `json:"root,omitempty"`
	Disposition contract.Disposition `json:"disposition"`
}

// TaskAnswer is the answer of POST /task; a task that failed carries its code and teaching.
type TaskAnswer struct {
	SessionKey   string           `json:"sessionKey,omitempty"`
	Conversation string           `json:"conversation"`
	Final        string           `json:"final,omitempty"`
	ErrorCode    contract.Code    `json:"errorCode,omitempty"`
	Teaching     string           `json:"teaching,omitempty"`
	Stop         agent.StopReason `json:"stop,omitempty"`
	ClosedCases  []ClosedCase     `json:"closedCases"`
	// Pending are the task's writes whose outcome has not come (a decision, a running
	// write): the task's work is not done while it has any.
	Pending []agent.Pending `json:"pending,omitempty"`
}

// TaskEndpoint is what ServeTasks writes into its TaskFile: where POST /task is served
// and the per-run key a client sends as its bearer token.
type TaskEndpoint struct {
	URL string `json:"url"`
	Key string `json:"key"`
}

// CheckTaskListen refuses a task endpoint address that is not loopback: tasks come from
// this machine only.
func CheckTaskListen(listen string) error {
	host, _, err := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--listen %q is not a loopback address; the task endpoint listens on loopback only", listen)
	}
	return nil
}

// ServeTasks serves POST /task on ln, one task at a time over the Agent's one
// connection, until ctx ends or the runtime fails (its credential is rejected or its
// connection replaced). It first prints on w the endpoint and the per-run key a client
// must send as its bearer token. The error is classified as [Runtime.Failure] does.
func (rt *Runtime) ServeTasks(ctx context.Context, ln net.Listener, w io.Writer) error {
	key := make([]byte, 24)
	rand.Read(key)
	wakes, stopWakes := context.WithCancel(ctx)
	defer stopWakes()
	ts := &taskServer{rt: rt, key: hex.EncodeToString(key), addr: ln.Addr().String(), fatal: make(chan error, 1), wakes: wakes}
	srv := &http.Server{Handler: ts.routes(), ReadHeaderTimeout: taskReadHeader}
	if f := rt.cfg.TaskFile; f != "" {
		b, err := json.Marshal(TaskEndpoint{URL: "http://" + ts.addr + "/task", Key: ts.key})
		if err == nil {
			err = datadir.WritePrivate(f, append(b, '\n'))
		}
		if err != nil {
			return fmt.Errorf("write the task endpoint file: %w", err)
		}
		fmt.Fprintf(w, "docket agent serve: POST http://%s/task with the bearer key in %s\n", ts.addr, f)
	} else {
		fmt.Fprintf(w, "docket agent serve: POST http://%s/task with header \"Authorization: Bearer %s\"\n", ts.addr, ts.key)
	}
	served := make(chan error, 1) // written once, when Serve returns
	go func() { served <- srv.Serve(ln) }()
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-ts.fatal:
	case runErr = <-served:
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskShutdownFor)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && runErr == nil {
		runErr = fmt.Errorf("shut down the task endpoint: %w", err)
	}
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	return rt.Failure(runErr)
}

// taskServer serves POST /task. It is safe for concurrent use; tasks queue.
type taskServer struct {
	rt   *Runtime
	key  string
	addr string
	// fatal receives the error that ends the runtime (credential rejected, connection
	// replaced); ServeTasks reads it once and shuts the server down. Never closed.
	fatal chan error
	mu    sync.Mutex // one task at a time
	// wakes bounds the waits of conversations whose writes are pending; it ends with
	// ServeTasks.
	wakes context.Context
}

func (s *taskServer) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /task", s.handleTask)
	return mux
}

func (s *taskServer) handleTask(w http.ResponseWriter, r *http.Request) {
	if r.Host != s.addr {
		writeTask(w, http.StatusForbidden, TaskAnswer{ErrorCode: contract.CodeHostNotAllowed, Teaching: "the task endpoint answers only to " + s.addr})
		return
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(tok), []byte(s.key)) != 1 {
		writeTask(w, http.StatusUnauthorized, TaskAnswer{ErrorCode: contract.CodeUnauthenticated, Teaching: "send the per-run key docket agent serve printed as a bearer token"})
		return
	}
	var req TaskRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxTaskBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || strings.TrimSpace(req.Text) == "" {
		writeTask(w, http.StatusBadRequest, TaskAnswer{SessionKey: req.SessionKey, ErrorCode: contract.CodeInvalidArgument,
			Teaching: "send a JSON object {text, caseType?, businessKey?, sessionKey?} with a non-empty text and no other fields"})
		return
	}
	if req.SessionKey == "" {
		// A caller that names no session gets one, to continue the conversation with.
		k := make([]byte, 12)
		rand.Read(k)
		req.SessionKey = "sk-" + hex.EncodeToString(k)
	}
	sum := sha256.Sum256([]byte(req.SessionKey))
	id := "s-" + hex.EncodeToString(sum[:12])
	text := req.Text
	if req.CaseType != "" {
		text += "\n\nCase type: " + req.CaseType
	}
	if len(req.BusinessKey) > 0 {
		text += "\nBusiness key: " + string(req.BusinessKey)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ans := TaskAnswer{SessionKey: req.SessionKey, Conversation: id, ClosedCases: []ClosedCase{}}
	l, err := s.rt.Loop(func(c agent.ToolCall, res agent.ToolResult) {
		if cc, ok := closedCase(c, res); ok {
			ans.ClosedCases = append(ans.ClosedCases, cc)
		}
	}, nil)
	var out agent.Outcome
	if err == nil {
		out, err = l.Send(r.Context(), id, text)
	}
	ans.Final, ans.Stop, ans.Pending = out.Final, out.Stop, out.Pending
	if err == nil && len(out.Pending) > 0 {
		go s.wake(id, out.Pending)
	}
	if err = s.rt.Failure(err); err != nil {
		if _, ok := errors.AsType[*Error](err); ok {
			select {
			case s.fatal <- err:
			default:
			}
		}
		ans.ErrorCode, ans.Teaching = codeOf(err), s.rt.key.Scrub(err.Error())
	}
	writeTask(w, http.StatusOK, ans)
}

// wake waits for the outcomes of a task's pending writes and resumes its conversation
// with them, by itself, as often as the conversation goes on waiting; it ends with the
// server. The task's caller reads the rest in the conversation.
func (s *taskServer) wake(id string, pending []agent.Pending) {
	l, err := s.rt.Loop(nil, nil)
	if err != nil {
		s.rt.log.Warn("conversation not woken", logConversation, id, logErr, err)
		return
	}
	for len(pending) > 0 {
		ok, err := l.Await(s.wakes, pending, wakeBound)
		if err != nil || !ok {
			if err != nil && s.wakes.Err() == nil {
				s.rt.log.Warn("conversation not woken", logConversation, id, logErr, err)
			}
			return
		}
		s.mu.Lock()
		out, err := l.Send(s.wakes, id, agent.WakeText)
		s.mu.Unlock()
		if err != nil {
			s.rt.log.Warn("woken conversation failed", logConversation, id, logErr, s.rt.Failure(err))
			return
		}
		pending = out.Pending
	}
}

// closedCase is the Case an accepted CloseCase call closed, with its root as the answer's
// View lists it.
func closedCase(c agent.ToolCall, res agent.ToolResult) (ClosedCase, bool) {
	if c.Name != contract.ToolCloseCase || res.IsError {
		return ClosedCase{}, false
	}
	var in contract.CloseCaseInput
	var head struct {
		Accepted  bool          `json:"accepted"`
		ErrorCode contract.Code `json:"errorCode"`
		View      any           `json:"view"`
	}
	if json.Unmarshal(c.Arguments, &in) != nil || json.Unmarshal([]byte(res.Content), &head) != nil || !head.Accepted || head.ErrorCode != "" {
		return ClosedCase{}, false
	}
	return ClosedCase{CaseID: in.CaseID, Root: rootOf(head.View, string(in.CaseID)), Disposition: in.Disposition}, true
}

// rootOf finds the root of Case id in a decoded View: any object with that caseId and a
// root.
func rootOf(v any, id string) string {
	switch v := v.(type) {
	case map[string]any:
		if v["caseId"] == id {
			if root, ok := v["root"].(string); ok && root != "" {
				return root
			}
		}
		for _, x := range v {
			if root := rootOf(x, id); root != "" {
				return root
			}
		}
	case []any:
		for _, x := range v {
			if root := rootOf(x, id); root != "" {
				return root
			}
		}
	}
	return ""
}

func codeOf(err error) contract.Code {
	if be, ok := errors.AsType[*agent.BudgetError](err); ok {
		return be.Code()
	}
	if code := contract.CodeOf(err); code != "" {
		return code
	}
	return contract.CodeInternal
}

func writeTask(w http.ResponseWriter, status int, a TaskAnswer) {
	body, err := json.Marshal(a)
	if err != nil {
		// The answer holds the model's text; one that cannot be encoded is refused whole.
		status = http.StatusInternalServerError
		body = fmt.Appendf(nil, `{"errorCode":%q,"teaching":"the task answer could not be encoded; the runtime's log has the run"}`, contract.CodeInternal)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The status is sent; a client that hangs up before the body has nothing to learn.
	w.Write(append(body, '\n'))
}
