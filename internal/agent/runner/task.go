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
	"os"
	"strings"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
)

// Bounds of the task endpoint and of taking tasks.
const (
	maxTaskBody     = 1 << 20          // bytes of one POST /task body
	taskReadHeader  = 10 * time.Second // how long a client may take to send its headers
	taskShutdownFor = 10 * time.Second // how long a running task may take to finish at shutdown
	claimWait       = 30 * time.Second // one long-poll for the Agent's next task
	retryAfter      = time.Second      // the pause after a claim or report that got no answer
)

// TaskRequest is the body of POST /task, the task endpoint of docket agent serve.
type TaskRequest struct {
	Text        string        `json:"text"`
	CaseType    string        `json:"caseType,omitempty"`
	BusinessKey contract.Args `json:"businessKey,omitempty"`
	CaseID      string        `json:"caseId,omitempty"`
	SessionKey  string        `json:"sessionKey,omitempty"` // the same key continues the same conversation; omitted: one is made and returned
}

// ClosedCase is a Case a task closed; see [contract.ClosedCase].
type ClosedCase = contract.ClosedCase

// TaskAnswer is the answer of POST /task; a task that failed carries its code and teaching.
type TaskAnswer struct {
	SessionKey   string             `json:"sessionKey,omitempty"`
	Task         contract.TaskID    `json:"task,omitempty"`
	State        contract.TaskState `json:"state,omitempty"`
	Conversation string             `json:"conversation"`
	Final        string             `json:"final,omitempty"`
	ErrorCode    contract.Code      `json:"errorCode,omitempty"`
	Teaching     string             `json:"teaching,omitempty"`
	ClosedCases  []ClosedCase       `json:"closedCases"`
	// Pending are the task's writes whose outcome has not come (a decision, a running
	// write): the task's work is not done while it has any, and the authority wakes the
	// conversation when they settle.
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

// ServeTasks takes the Agent's tasks from the authority, outbound, by long-poll, and runs
// them one at a time over the Agent's one connection, until ctx ends or the runtime fails
// (its credential is rejected or its connection replaced): tasks members post, the
// wakes of conversations whose Operations settled, and the tasks of POST /task on ln,
// which posts each into the authority and answers once its run is reported. It first
// writes the endpoint and the per-run key a client must send as its bearer token into
// the task file (mode 0600), and prints on w the endpoint and the file, never the key.
// The error is classified as [Runtime.Failure] does.
func (rt *Runtime) ServeTasks(ctx context.Context, ln net.Listener, w io.Writer) error {
	if rt.api == nil {
		return &Error{Kind: KindUsage, Err: errors.New("docket agent serve takes its tasks from the authority; leave out --conversation-dir")}
	}
	key := make([]byte, 24)
	rand.Read(key)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ts := &taskServer{rt: rt, key: hex.EncodeToString(key), addr: ln.Addr().String(), waiters: map[contract.TaskID]chan contract.Task{}}
	srv := &http.Server{Handler: ts.routes(), ReadHeaderTimeout: taskReadHeader, BaseContext: func(net.Listener) context.Context { return ctx }}
	// The key is a bearer credential: it goes only into a file of mode 0600, never to
	// the terminal, where scrollback, a shared screen or a captured log would keep it
	// (docs/security.md, "Credentials and streams"). Without --task-file the file is a
	// fresh one in the temporary directory, removed when the runtime stops.
	f := rt.cfg.TaskFile
	if f == "" {
		tmp, err := os.CreateTemp("", "docket-task-*.json")
		if err != nil {
			return fmt.Errorf("make the task endpoint file: %w", err)
		}
		f = tmp.Name()
		defer os.Remove(f)
		if err := tmp.Close(); err != nil {
			return fmt.Errorf("make the task endpoint file: %w", err)
		}
	}
	b, err := json.Marshal(TaskEndpoint{URL: "http://" + ts.addr + "/task", Key: ts.key})
	if err == nil {
		err = datadir.WritePrivate(f, append(b, '\n'))
	}
	if err != nil {
		return fmt.Errorf("write the task endpoint file: %w", err)
	}
	fmt.Fprintf(w, "docket agent serve: POST http://%s/task with the bearer key in %s\n", ts.addr, f)
	served := make(chan error, 1) // written once, when Serve returns
	go func() { served <- srv.Serve(ln) }()
	taken := make(chan error, 1) // written once, when the claim loop ends
	go func() { taken <- rt.takeTasks(ctx, ts.reported) }()
	var runErr error
	takenDone := false
	select {
	case <-ctx.Done():
	case runErr = <-taken:
		takenDone = true
	case runErr = <-served:
	}
	cancel()
	shut, stop := context.WithTimeout(context.WithoutCancel(ctx), taskShutdownFor)
	defer stop()
	if err := srv.Shutdown(shut); err != nil && runErr == nil {
		runErr = fmt.Errorf("shut down the task endpoint: %w", err)
	}
	if !takenDone {
		if err := <-taken; runErr == nil {
			runErr = err
		}
	}
	if errors.Is(runErr, http.ErrServerClosed) || errors.Is(runErr, context.Canceled) {
		runErr = nil
	}
	return rt.Failure(runErr)
}

// takeTasks claims the Agent's tasks one at a time, runs each and reports it, telling
// reported each task as the authority then holds it. It returns when ctx ends (nil) or
// the runtime fails.
func (rt *Runtime) takeTasks(ctx context.Context, reported func(contract.Task)) error {
	for ctx.Err() == nil {
		claim, err := rt.api.ClaimTask(ctx, claimWait)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if err := rt.Failure(err); isFatal(err) {
				return err
			}
			rt.log.Warn("task claim failed", logErr, err)
			pause(ctx, retryAfter)
			continue
		}
		if claim.Task == nil {
			continue
		}
		rep, err := rt.runTask(ctx, claim)
		if err != nil {
			if ctx.Err() != nil {
				// Stopped mid-run: the claim runs out and the task is taken again, resuming
				// the conversation where its saves left it.
				return nil
			}
			return err
		}
		t, err := rt.report(ctx, claim.Task.ID, rep)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if err := rt.Failure(err); isFatal(err) {
				return err
			}
			rt.log.Warn("task report failed; the task is taken again once its claim runs out", logTask, claim.Task.ID, logErr, err)
			continue
		}
		reported(t)
	}
	return nil
}

// report sends rep, once more when the first got no answer: a report that repeats one
// the authority holds is answered with the task as it stands.
func (rt *Runtime) report(ctx context.Context, id contract.TaskID, rep contract.TaskReport) (contract.Task, error) {
	t, err := rt.api.ReportTask(ctx, id, rep)
	if err != nil && contract.CodeOf(err) == "" && ctx.Err() == nil {
		pause(ctx, retryAfter)
		t, err = rt.api.ReportTask(ctx, id, rep)
	}
	return t, err
}

// runTask runs one claimed task or wake in its conversation and returns its report. It
// keeps the claim's lease while it runs. Only a failure that ends the runtime, or ctx's
// end, is an error: any other failure is the task's, and reported.
func (rt *Runtime) runTask(ctx context.Context, claim contract.TaskClaim) (contract.TaskReport, error) {
	t := *claim.Task
	cancel := newCancelSignal()
	if t.Cancel != nil {
		cancel.fire()
	}
	renewing, stopRenew := context.WithCancel(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		rt.keepLease(renewing, t, cancel)
	}()
	defer func() {
		stopRenew()
		<-renewed
	}()
	rep := contract.TaskReport{Attempt: t.Attempt, TaskResult: contract.TaskResult{ClosedCases: []contract.ClosedCase{}}}
	if t.Result != nil {
		// A wake goes on from the run that waited: the Cases it closed stay listed.
		rep.ClosedCases = append(rep.ClosedCases, t.Result.ClosedCases...)
	}
	admitted := admittedBefore(t)
	l, err := rt.Loop(func(c agent.ToolCall, res agent.ToolResult) {
		if cc, ok := rt.closedCase(string(t.Conversation), c, res); ok {
			rep.ClosedCases = append(rep.ClosedCases, cc)
		}
		admitted.seen(c, res)
		if rt.onTool != nil {
			rt.onTool(c, res)
		}
	}, nil)
	if err != nil {
		return rt.failed(rep, err), nil
	}
	rt.log.Info("task taken", logTask, t.ID, logConversation, t.Conversation, logWake, claim.Wake, logAttempt, t.Attempt)
	var out agent.Outcome
	ctx = withTask(ctx, t.ID)
	run := agent.WithCancelSignal(ctx, cancel.done)
	switch {
	case claim.Wake && budgetOnly(t.Waiting):
		// A budget stopped the run before a model request: go on where it stopped.
		out, err = l.SendTask(run, string(t.Conversation), wakeName(t), "")
	case claim.Wake:
		out, err = l.Wake(run, string(t.Conversation), wakeName(t))
	default:
		out, err = l.SendTask(run, string(t.Conversation), string(t.ID), taskText(t))
	}
	if err = rt.Failure(err); isFatal(err) || ctx.Err() != nil {
		return contract.TaskReport{}, errors.Join(err, ctx.Err())
	}
	rep.Final = out.Final
	if be, ok := errors.AsType[*agent.BudgetExhaustedError](err); ok {
		// Not sent: the task waits on the budget, and is woken when it has room.
		rep.State, rep.Waiting = contract.TaskWaiting, append(out.Pending, contract.TaskWait{Budget: be.Budget})
		rep.ErrorCode, rep.Teaching = be.Err.Code, be.Err.Teaching
		return rep, nil
	}
	switch {
	case errors.Is(err, agent.ErrCancelled), err == nil && t.Cancel != nil:
		// Stopped by the cancel; or taken (a wake, a claim taken again) after the cancel,
		// with nothing left for the model: it ends cancelled once nothing is pending.
		rt.log.Info("task cancelled", logTask, t.ID, logConversation, t.Conversation)
		return cancelledReport(rep, t, out, admitted), nil
	case err == nil && cancel.fired():
		// The cancel came after the run's last step: it ended as it would have.
		rep.Operations = admitted
		if len(out.Pending) > 0 {
			rep.State, rep.Waiting = contract.TaskWaiting, out.Pending
		} else {
			rep.State = contract.TaskCompleted
		}
		return rep, nil
	case err != nil:
		return rt.failed(rep, err), nil
	case len(out.Pending) > 0:
		rep.State, rep.Waiting = contract.TaskWaiting, out.Pending
	default:
		rep.State = contract.TaskCompleted
	}
	return rep, nil
}

// keepLease renews t's claim at a third of its lease until ctx ends, saying what the run
// waits on, if anything. Until the run learns of a cancel, each renewal is held by the
// authority until the next is due and answered at once when a member cancels the task,
// which fires cancel: the renewal the runtime sends anyway is how it learns of a cancel
// within moments (docs/workbench.md, Cancelling a task). A run whose model request is
// past its deadline is stuck: its claim is not renewed, so that it runs out and another
// runtime may take the task (the request's own deadline normally ends the turn first;
// docs/workbench.md, Model deadlines). A renewal that fails is logged: the run goes on,
// and if the claim runs out another runtime resumes it from the conversation.
func (rt *Runtime) keepLease(ctx context.Context, t contract.Task, cancel *cancelSignal) {
	every := time.Minute
	if t.LeaseUntil != nil {
		every = max(time.Until(*t.LeaseUntil)/3, time.Second)
	}
	// A renewal is held at most as long as a claim's long-poll.
	every = min(every, contract.MaxTaskClaimWait)
	changed := rt.watch.Changed()
	held := !cancel.fired()
	if !held {
		pauseOr(ctx, every, changed)
	}
	for ctx.Err() == nil {
		ren := contract.TaskRenewal{Attempt: t.Attempt}
		if w, ok := rt.watch.Current(); ok {
			if w.Phase != contract.RunWaitRetry && !time.Now().Before(w.Deadline) {
				rt.log.Warn("task lease not renewed: the model request is stuck past its deadline", logTask, t.ID, logModel, w.Origin, logPhase, w.Phase)
				pauseOr(ctx, every, changed)
				continue
			}
			if w.Origin != "" { // a wait of a provider with no endpoint (scripted) is not reported
				ren.Wait = w.RunWait()
			}
		}
		if held {
			ren.WaitMS = int(every.Milliseconds())
		}
		began := time.Now()
		got, again, err := rt.renew(ctx, t.ID, ren, changed)
		if again {
			continue
		}
		if err != nil && ctx.Err() == nil {
			rt.log.Warn("task lease not renewed", logTask, t.ID, logErr, err)
		}
		if err == nil && got.Cancel != nil && held {
			rt.log.Info("task cancel learnt from the lease renewal", logTask, t.ID)
			held = false
			cancel.fire()
		}
		// A held renewal answered early (a cancel, a lost claim) or one not held waits
		// out the rest of the period, so renewals keep their pace.
		pauseOr(ctx, every-time.Since(began), changed)
	}
}

// renew renews the claim of task id with ren. A held renewal is cut short when the run's
// wait changes (a model request waits to be sent again), and again is true: the caller
// renews at once, so the task says so now ("rate limited, attempt 2 of 5"), not at the
// next renewal.
func (rt *Runtime) renew(ctx context.Context, id contract.TaskID, ren contract.TaskRenewal, changed <-chan struct{}) (got contract.Task, again bool, err error) {
	rctx, stop := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-changed:
			stop()
		case <-rctx.Done():
		}
	}()
	got, err = rt.api.RenewTask(rctx, id, ren)
	again = rctx.Err() != nil && ctx.Err() == nil
	stop()
	<-watched
	return got, again, err
}

// pauseOr waits d, or until ctx ends or changed fires.
func pauseOr(ctx context.Context, d time.Duration, changed <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-changed:
	}
}

// taskText is what the model is given for t: its text, marked as data with its author
// when a delegate or another Agent wrote it ([agent.AuthoredText]), and the Case it is
// pinned to (the authority refuses the conversation's calls on any other).
func taskText(t contract.Task) string {
	text := agent.AuthoredText(t.PostedBy, t.Agent, t.Text)
	if t.CaseType != "" {
		text += "\n\nCase type: " + t.CaseType + "\nBusiness key: " + t.BusinessKey.JSON() +
			"\n(This task is pinned to that Case Type and business key: calls on any other Case are refused.)"
	}
	if t.CaseID != "" {
		text += "\nCase: " + string(t.CaseID)
	}
	return text
}

// wakeName names a wake of t in its conversation: the same for every claim of one wake,
// so a wake taken again does not add its text twice.
func wakeName(t contract.Task) string {
	var b strings.Builder
	b.WriteString("wake:" + string(t.ID))
	for _, w := range t.Waiting {
		if w.Budget != "" {
			fmt.Fprintf(&b, ":budget.%s", w.Budget)
			continue
		}
		fmt.Fprintf(&b, ":%s.%d.%d", w.Tool, w.Ordinal, w.After)
	}
	return b.String()
}

// failed is rep failed with err's code and words, the model key scrubbed.
func (rt *Runtime) failed(rep contract.TaskReport, err error) contract.TaskReport {
	rep.State, rep.ErrorCode, rep.Teaching = contract.TaskFailed, codeOf(err), rt.key.Scrub(err.Error())
	return rep
}

// isFatal reports whether err ends the runtime: a rejected credential or a replaced
// connection.
func isFatal(err error) bool {
	_, ok := errors.AsType[*Error](err)
	return ok
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// taskServer serves POST /task as a thin client of the authority. It is safe for
// concurrent use.
type taskServer struct {
	rt   *Runtime
	key  string
	addr string

	mu      sync.Mutex // guards waiters
	waiters map[contract.TaskID]chan contract.Task
}

func (s *taskServer) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /task", s.handleTask)
	return mux
}

// reported hands a reported task to the POST /task waiting for it, if any.
func (s *taskServer) reported(t contract.Task) {
	s.mu.Lock()
	ch := s.waiters[t.ID]
	delete(s.waiters, t.ID)
	s.mu.Unlock()
	if ch != nil {
		ch <- t // buffered: one report per waiter
	}
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
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxTaskBody))
	if err == nil {
		err = contract.DecodeStrict(b, &req)
	}
	if err != nil || strings.TrimSpace(req.Text) == "" {
		writeTask(w, http.StatusBadRequest, TaskAnswer{SessionKey: req.SessionKey, ErrorCode: contract.CodeInvalidArgument,
			Teaching: "send a JSON object {text, caseType?, businessKey?, caseId?, sessionKey?} with a non-empty text and no other fields"})
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
	ans := TaskAnswer{SessionKey: req.SessionKey, Conversation: id, ClosedCases: []ClosedCase{}}
	t, err := s.rt.api.PostOwnTask(r.Context(), contract.TaskRequest{Text: req.Text, Conversation: id,
		CaseType: req.CaseType, BusinessKey: req.BusinessKey, CaseID: contract.CaseID(req.CaseID)})
	if err == nil {
		t, err = s.await(r.Context(), t.ID)
	}
	if err != nil {
		ans.ErrorCode, ans.Teaching = codeOf(err), s.rt.key.Scrub(err.Error())
		writeTask(w, http.StatusOK, ans)
		return
	}
	ans.Task, ans.State, ans.Pending = t.ID, t.State, t.Waiting
	if res := t.Result; res != nil {
		ans.Final, ans.ErrorCode, ans.Teaching = res.Final, res.ErrorCode, res.Teaching
		ans.ClosedCases = append(ans.ClosedCases, res.ClosedCases...)
	}
	writeTask(w, http.StatusOK, ans)
}

// await waits until task id is reported (its work done, failed or waiting), as the
// authority holds it.
func (s *taskServer) await(ctx context.Context, id contract.TaskID) (contract.Task, error) {
	ch := make(chan contract.Task, 1)
	s.mu.Lock()
	s.waiters[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiters, id)
		s.mu.Unlock()
	}()
	// A report that came before the waiter was set is in the authority.
	if t, err := s.rt.api.OwnTask(ctx, id); err != nil || t.Result != nil {
		return t, err
	}
	select {
	case t := <-ch:
		return t, nil
	case <-ctx.Done():
		return contract.Task{}, fmt.Errorf("wait for task %s: %w", id, ctx.Err())
	}
}

func codeOf(err error) contract.Code {
	if be, ok := errors.AsType[*agent.BudgetError](err); ok {
		return be.Code()
	}
	if pe, ok := errors.AsType[*agent.ProviderError](err); ok {
		return pe.Code() // model_stalled, model_transport, …: what failed, for the task's reader
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
