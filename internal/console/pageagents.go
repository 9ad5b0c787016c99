package console

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// agentsBody is what the Agents page shows: every Agent with its last Operation, and the
// token just issued when the page answers a create or a rotation.
type agentsBody struct {
	Agents []agentRow // newest first, at most maxRowsShown
	Pager  pager
	Issued *contract.AgentToken // shown on this one answer only, never stored or sent again
	Name   string               // the name typed into the create form, kept after a refusal
	Error  string               // why the create form was refused
}

// agentRow is one Agent on the Agents page.
type agentRow struct {
	contract.Agent
	Last    *opView                // its newest Operation; nil when it made no call
	Profile *contract.AgentProfile // its profile and the state of its runtime; nil without one
}

// pageAgents lists the project's Agents with their kind, last Operation and token, and
// the form that creates one.
func (s *Server) pageAgents(w http.ResponseWriter, r *http.Request, v visit) error {
	return s.showAgents(w, r, v, http.StatusOK, agentsBody{})
}

func (s *Server) showAgents(w http.ResponseWriter, r *http.Request, v visit, status int, b agentsBody) error {
	ctx := r.Context()
	all, err := s.ids.Agents(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	as, pg, err := pageOf(r.URL.Query(), s.agentsList(v), newestFirst(all, func(a contract.Agent) (time.Time, string) { return a.CreatedAt, string(a.ID) }),
		func(a contract.Agent) string { return string(a.ID) }, maxRowsShown)
	if err != nil {
		return err
	}
	b.Pager = pg
	last := map[contract.AgentID]opView{}
	if s.opl != nil {
		ops, err := s.opl.OperationList(ctx, v.caller, v.project, "", false)
		if err != nil {
			return err
		}
		for _, op := range ops { // oldest first: the last one kept is the newest
			last[op.Agent] = viewOp(op)
		}
	}
	ps, err := s.auth.AgentProfiles(ctx, v.caller, v.project)
	if err != nil {
		return err
	}
	profiles := map[contract.AgentID]*contract.AgentProfile{}
	for i := range ps {
		profiles[ps[i].Agent] = &ps[i]
	}
	for _, a := range as {
		row := agentRow{Agent: a, Profile: profiles[a.ID]}
		if op, ok := last[a.ID]; ok {
			row.Last = &op
		}
		b.Agents = append(b.Agents, row)
	}
	return s.render(w, r, v, status, "agents", b)
}

// agentsList is the list of the Agents page.
func (s *Server) agentsList(v visit) listPage {
	return listPage{Path: "/projects/" + url.PathEscape(string(v.project)) + "/agents", Param: "after", What: "Agents"}
}

// pageCreateAgent creates an Agent and answers with the Agents page showing its token,
// this once: the token is in this answer's body alone, never in a URL, a log or an event.
func (s *Server) pageCreateAgent(w http.ResponseWriter, r *http.Request, v visit) error {
	name := strings.TrimSpace(r.PostFormValue("name"))
	at, err := s.ids.CreateAgent(r.Context(), v.caller, v.project, contract.CreateAgentRequest{Name: name, Kind: r.PostFormValue("kind")})
	if err != nil {
		if ce, ok := errors.AsType[*contract.Error](err); ok && httpStatus(ce.Code) < http.StatusInternalServerError {
			return s.showAgents(w, r, v, httpStatus(ce.Code), agentsBody{Name: name, Error: ce.Teaching})
		}
		return err
	}
	return s.showAgents(w, r, v, http.StatusCreated, agentsBody{Issued: &at})
}

// pageRotateAgent issues an Agent a new token, ending the old one, and shows it this once.
func (s *Server) pageRotateAgent(w http.ResponseWriter, r *http.Request, v visit) error {
	at, err := s.ids.RotateAgentToken(r.Context(), v.caller, v.project, r.PathValue("agent"))
	if err != nil {
		return err
	}
	return s.showAgents(w, r, v, http.StatusOK, agentsBody{Issued: &at})
}

// pageAgentsAgain sends a GET of the address a rotation answered at — a live page
// bringing itself up to date, or the address typed again — to the Agents page, which
// shows no token.
func (s *Server) pageAgentsAgain(w http.ResponseWriter, r *http.Request, v visit) error {
	http.Redirect(w, r, "/projects/"+url.PathEscape(string(v.project))+"/agents", http.StatusSeeOther)
	return nil
}

// pageRevokeAgent revokes an Agent: its token stops working at once.
func (s *Server) pageRevokeAgent(w http.ResponseWriter, r *http.Request, v visit) error {
	_, err := s.ids.RevokeAgent(r.Context(), v.caller, v.project, r.PathValue("agent"))
	if err != nil {
		return err
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/agents", noticeAgentRevoked)
}

// An Agent's page shows the newest of its lists that grow as it works; the API pages
// through all of them (docs/security.md, "Bounds").
const (
	maxHookCallsShown     = 50
	maxConversationsShown = 50
)

// agentBody is what an Agent's page shows: its strip of Operations, the calls of the
// coding agent whose hook holds its token, its tasks, its conversations, and the form
// that gives it a task.
type agentBody struct {
	Agent         contract.Agent
	Version       string // changes whenever one of its Operations does
	Ops           []opView
	OpsPager      pager                          // to its older Operations, on the Operations page
	HookCalls     []hookCallView                 // newest first, at most maxHookCallsShown
	CallsPager    pager                          // to its older hook calls
	Tasks         []taskView                     // newest first, at most maxPageTasks
	TasksPager    pager                          // to its older tasks
	Conversations []contract.ConversationSummary // last saved first, at most maxConversationsShown
	ConvsPager    pager                          // to its older conversations
	Form          taskForm
	Pane          *convPane // the conversation in the centre; nil when there is none
	Cases         []caseRow // the Cases it opened, newest first
	// Profile is its profile and its runtime's last reported state; nil without one.
	Profile *contract.AgentProfile
	// Model is the form of how its runtime sends model requests (thinking, retries,
	// deadlines), shown with a profile.
	Model modelForm
	// Budgets are the budgets that count its model requests (docs/budgets.md).
	Budgets []budgetView
	// Coding says the Agent is a coding agent's: its hook reported calls and it has no
	// model runtime, so its page shows those calls in place of a task form that could
	// do nothing (docs/console.md, "An Agent's page").
	Coding bool
	// Materials are the files members added for it (docs/materials.md), and Workbench
	// says where the Add files form goes; nil when serve runs without docket start.
	Materials []materialView
	Workbench *Workbench
}

// materialView is one material on an Agent's or a conversation's page: who added it,
// and each read that ran, by which Agent's Operation, when, and who approved it.
type materialView struct {
	contract.Material
	AddedByName who
	ReadViews   []materialReadView
}

// materialReadView is one settled read of a material, with its names resolved.
type materialReadView struct {
	contract.MaterialRead
	By         who // the Agent that read it
	ApprovedBy who // who approved the read; "—" when it needed no decision
}

// materialViews returns agent's materials as the pages show them; conversation, when
// not "", keeps only those added to it.
func (s *Server) materialViews(ctx context.Context, v visit, agent contract.AgentID, conversation string) ([]materialView, error) {
	ms, err := s.auth.Materials(ctx, v.caller, v.project, string(agent))
	if err != nil {
		return nil, err
	}
	by := make([]contract.Principal, 0, len(ms))
	for _, m := range ms {
		by = append(by, m.AddedBy)
		for _, rd := range m.Reads {
			by = append(by, rd.ApprovedBy)
		}
	}
	book, err := s.names(ctx, v, by...)
	if err != nil {
		return nil, err
	}
	out := []materialView{}
	for _, m := range ms {
		if conversation == "" || m.Conversation == conversation {
			mv := materialView{Material: m, AddedByName: book.who(m.AddedBy)}
			for _, rd := range m.Reads {
				mv.ReadViews = append(mv.ReadViews, materialReadView{MaterialRead: rd,
					By: book.who(contract.NewPrincipal(contract.PrincipalAgent, string(rd.Agent))), ApprovedBy: book.who(rd.ApprovedBy)})
			}
			out = append(out, mv)
		}
	}
	return out, nil
}

// hookCallView is one coding-agent call on an Agent's page.
type hookCallView struct {
	contract.HookCallEntry
	By who // who decided it, by name
}

// Key changes whenever what the row shows does, so the live page replaces it.
func (h hookCallView) Key() string {
	k := strconv.FormatInt(h.Ordinal, 10) + "-" + h.Decision
	if h.Outcome != nil {
		k += "-ran"
	}
	return k
}

// What is the path or command the call lands on.
func (h hookCallView) What() string { return cmp.Or(h.Path, h.Command) }

// pageAgent shows one Agent: its Operations, newest first, its coding agent's calls, its
// tasks and its conversations.
func (s *Server) pageAgent(w http.ResponseWriter, r *http.Request, v visit) error {
	return s.showAgent(w, r, v, http.StatusOK, taskForm{}, nil)
}

// showAgent renders the Agent's page with form, the task form as sent, and model, the
// model form as sent when it was refused (nil: as its profile sets it).
func (s *Server) showAgent(w http.ResponseWriter, r *http.Request, v visit, status int, form taskForm, model *modelForm) error {
	ctx := r.Context()
	a, err := s.findAgent(r, v)
	if err != nil {
		return err
	}
	b := agentBody{Agent: a, Form: form}
	path := "/projects/" + url.PathEscape(string(v.project)) + "/agents/" + url.PathEscape(string(a.ID))
	if b.Tasks, b.TasksPager, err = s.agentTasks(r, v, a, listPage{Path: path, Param: "tasks_after", What: "tasks"}); err != nil {
		return err
	}
	if s.opl != nil {
		ops, err := s.opl.OperationList(ctx, v.caller, v.project, string(a.ID), false)
		if err != nil {
			return err
		}
		g, err := groupOps(ops, nil, "/projects/"+url.PathEscape(string(v.project))+"/operations")
		if err != nil {
			return err
		}
		if len(g) == 1 {
			b.Ops, b.Version, b.OpsPager = g[0].Ops, g[0].Version, g[0].Pager
		}
	}
	if s.hooks != nil {
		calls, err := s.hooks.HookCalls(ctx, v.caller, v.project, a.ID)
		if err != nil {
			return err
		}
		deciders := make([]contract.Principal, 0, len(calls))
		for _, c := range calls {
			deciders = append(deciders, c.DecidedBy)
		}
		book, err := s.names(ctx, v, deciders...)
		if err != nil {
			return err
		}
		slices.Reverse(calls)
		list := listPage{Path: path, Param: "calls_after", What: "calls"}
		ordinal := func(c contract.HookCallEntry) string { return strconv.FormatInt(c.Ordinal, 10) }
		if calls, b.CallsPager, err = pageOf(r.URL.Query(), list, calls, ordinal, maxHookCallsShown); err != nil {
			return err
		}
		for _, c := range calls {
			b.HookCalls = append(b.HookCalls, hookCallView{HookCallEntry: c, By: book.who(c.DecidedBy)})
		}
	}
	convs, err := s.auth.Conversations(ctx, v.caller, v.project, string(a.ID))
	if err != nil {
		return err
	}
	slices.SortFunc(convs, func(x, y contract.ConversationSummary) int { return y.UpdatedAt.Compare(x.UpdatedAt) })
	list := listPage{Path: path, Param: "conversations_after", What: "conversations"}
	id := func(c contract.ConversationSummary) string { return string(c.ID) }
	if b.Conversations, b.ConvsPager, err = pageOf(r.URL.Query(), list, convs, id, maxConversationsShown); err != nil {
		return err
	}
	if b.Pane, err = s.selectedConversation(r, v, a, b.Conversations, b.Ops); err != nil {
		return err
	}
	if b.Cases, err = s.agentCases(r, v, a); err != nil {
		return err
	}
	if p, err := s.auth.AgentProfile(ctx, v.caller, v.project, string(a.ID)); err == nil {
		b.Profile = &p
		b.Model = modelFormOf(p.ProfileSpec)
		if model != nil {
			b.Model = *model
		}
	} else if contract.CodeOf(err) != contract.CodeNotFound {
		return err
	}
	b.Coding = len(b.HookCalls) > 0 && b.Profile == nil
	if b.Budgets, err = s.agentBudgets(ctx, v, a); err != nil {
		return err
	}
	if b.Materials, err = s.materialViews(ctx, v, a.ID, ""); err != nil {
		return err
	}
	if s.workbench != nil && s.workbench.MaterialsPath != "" {
		b.Workbench = s.workbench
	}
	return s.render(w, r, v, status, "agent", b, event.OpAdmitted, event.OpChanged, event.ConversationSaved, event.TaskPosted, event.TaskClaimed, event.TaskReported, event.TaskCancelRequested, event.CaseOpened, event.CaseClosed, event.HookReported,
		event.BudgetSet, event.BudgetRemoved, event.BudgetWarned, event.BudgetExhausted, event.ConversationCompacted, event.MaterialAdded, event.MaterialDisclosureSet)
}

// findAgent returns the Agent the request's {agent} names, by id.
func (s *Server) findAgent(r *http.Request, v visit) (contract.Agent, error) {
	as, err := s.ids.Agents(r.Context(), v.caller, v.project)
	if err != nil {
		return contract.Agent{}, err
	}
	id := r.PathValue("agent")
	if i := slices.IndexFunc(as, func(a contract.Agent) bool { return string(a.ID) == id || a.Name == id }); i >= 0 {
		return as[i], nil
	}
	return contract.Agent{}, contract.Errorf(contract.CodeNotFound, "project %s has no Agent %s; the Agents page lists them.", v.project, id)
}

// transcriptBody is what a conversation's page shows: its messages, read-only, in the
// words of the Agent's page with each answer whole.
type transcriptBody struct {
	Agent        contract.Agent
	Conversation contract.Conversation
	Turns        []turnView     // its messages, each call with its answer
	Count        int            // its messages as saved
	Materials    []materialView // the files added to this conversation
}

// messageView is one message of a transcript: the agent runtime's form (a role, text,
// tool calls and their results), or its JSON when it is in another form.
type messageView struct {
	Role    string       `json:"role"`
	Text    string       `json:"text"`
	Calls   []callView   `json:"calls"`
	Results []resultView `json:"results"`
	Turn    *struct {
		Retries []contract.ModelAttempt `json:"retries"`
	} `json:"turn"`
	Raw string `json:"-"`
}

type callView struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type resultView struct {
	CallID  string `json:"callId"`
	Content string `json:"content"`
	IsError bool   `json:"isError"`
}

// pageTranscript shows one of an Agent's conversations: each message with its tool calls
// and their results.
func (s *Server) pageTranscript(w http.ResponseWriter, r *http.Request, v visit) error {
	a, err := s.findAgent(r, v)
	if err != nil {
		return err
	}
	c, err := s.auth.Conversation(r.Context(), v.caller, v.project, string(a.ID), conversation(r))
	if err != nil {
		return err
	}
	b := transcriptBody{Agent: a, Conversation: c, Turns: conversationPane(c, nil, 0).Turns, Count: len(c.Messages)}
	if b.Materials, err = s.materialViews(r.Context(), v, a.ID, string(c.ID)); err != nil {
		return err
	}
	return s.render(w, r, v, http.StatusOK, "transcript", b, event.ConversationSaved, event.ConversationCompacted, event.MaterialAdded, event.MaterialDisclosureSet)
}

// indentJSON returns raw indented, or as it is when it is not JSON.
func indentJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}
