package console

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// maxShownResult bounds the raw text of a tool answer kept for its disclosure in an
// Agent's conversation pane, in bytes; the transcript page keeps it whole.
const maxShownResult = 4000

// convPane is the conversation an Agent's page shows in its centre: each turn, each tool
// call with its answer summarised and the strip entry of the Operation it became, and
// what the conversation waits for.
type convPane struct {
	ID    contract.ConversationID
	Turns []turnView
	Waits []waitView
}

// turnView is one message of the pane: the person's words, or the model's text and
// calls. Key changes whenever what it shows does, so the live page replaces it.
type turnView struct {
	Key     string
	Role    string
	Text    string       // its text as shown: long JSON put in words or left to RawText
	RawText string       // its whole text when Text leaves some out; "" otherwise
	Calls   []callTurn   // the model's calls, each with its answer
	Results []resultTurn // answers to calls of no turn shown (the transcript shows them here)
	Raw     string       // a message in another form, as indented JSON
	// Compacted is, on the summary that replaced older turns, that compaction; nil on
	// any other message.
	Compacted *compactedView
	// Retries says, on a model turn whose request was sent again, each failed attempt
	// and the wait after it; "" when it was sent once.
	Retries string
	// Failed are the model turns that failed after this message (and the answers to its
	// calls): a failed turn writes no message of its own.
	Failed []failedView
}

// failedView is a model turn that failed, as a page says it.
type failedView struct {
	At       time.Time
	Model    string
	Code     contract.Code
	Attempts int
	Text     string // each attempt: what failed, and the wait after it
}

// failedWire is the part of a failed turn of the runtime's conversation state a page
// reads (docs/workbench.md, Model retries).
type failedWire struct {
	Model    string                  `json:"model"`
	At       time.Time               `json:"at"`
	After    int                     `json:"after"`
	Code     contract.Code           `json:"code"`
	Attempts []contract.ModelAttempt `json:"attempts"`
}

// waitView is an Operation the conversation waits on.
type waitView struct {
	contract.TaskWait
	Op *opView
}

// resultOrdinal is the part of a saved tool result the pane reads besides resultView.
type resultOrdinal struct {
	CallID  string `json:"callId"`
	Ordinal int64  `json:"ordinal"`
}

// conversationPane builds the pane of conversation c, with ops the Agent's Operations,
// each raw answer kept up to maxRaw bytes (0: whole). An answer is shown under the call
// it answers; one whose call no turn holds is shown in the message that carried it.
func conversationPane(c contract.Conversation, ops []opView, maxRaw int) convPane {
	byOrdinal := map[int64]*opView{}
	for i := range ops {
		byOrdinal[ops[i].Ordinal] = &ops[i]
	}
	results := map[string]*resultTurn{}
	ordinals := map[string]int64{}
	views := make([]messageView, len(c.Messages))
	called := map[string]bool{}
	for i, m := range c.Messages {
		views[i] = readMessage(m)
		var withOrdinals struct {
			Results []resultOrdinal `json:"results"`
		}
		if json.Unmarshal(m, &withOrdinals) == nil {
			for _, r := range withOrdinals.Results {
				ordinals[r.CallID] = r.Ordinal
			}
		}
		for _, r := range views[i].Results {
			results[r.CallID] = newResultTurn(r, maxRaw)
		}
		for _, call := range views[i].Calls {
			called[call.ID] = true
		}
	}
	var st struct {
		Watching []contract.TaskWait `json:"watching"`
		Failed   []failedWire        `json:"failed"`
	}
	if len(c.State) > 0 && json.Unmarshal(c.State, &st) != nil {
		st.Watching, st.Failed = nil, nil // a state in another form: nothing of it is shown
	}
	failedAfter := map[int][]failedView{}
	for _, f := range st.Failed {
		at := min(max(f.After-1, 0), max(len(views)-1, 0))
		failedAfter[at] = append(failedAfter[at], failedView{At: f.At, Model: f.Model, Code: f.Code, Attempts: contract.ModelAttemptsMade(f.Attempts),
			Text: contract.ModelAttemptsText(f.Attempts, true)})
	}
	p := convPane{ID: c.ID}
	for i, mv := range views {
		t := newTurn(mv)
		if mv.Turn != nil && len(mv.Turn.Retries) > 0 {
			t.Retries = contract.ModelAttemptsText(mv.Turn.Retries, false)
		}
		if cp, text, ok := compactedTurn(c, mv); ok {
			t.Compacted = cp
			t.Text, t.RawText = shownText(text)
		}
		for _, r := range mv.Results {
			if !called[r.CallID] {
				t.Results = append(t.Results, *results[r.CallID])
			}
		}
		if mv.Raw == "" && mv.Text == "" && len(mv.Calls) == 0 && len(t.Results) == 0 {
			// Answers only: they are shown under their calls, and a turn that failed after
			// them with the message those calls are in.
			attachFailed(p.Turns, failedAfter[i])
			continue
		}
		for i := range t.Calls {
			t.Calls[i].Result = results[t.Calls[i].ID]
			if o := ordinals[t.Calls[i].ID]; o > 0 {
				t.Calls[i].Op = byOrdinal[o]
			}
		}
		p.Turns = append(p.Turns, t)
		attachFailed(p.Turns, failedAfter[i])
	}
	for i := range p.Turns {
		p.Turns[i].Key = viewKey(p.Turns[i])
	}
	for _, w := range st.Watching {
		p.Waits = append(p.Waits, waitView{TaskWait: w, Op: byOrdinal[w.Ordinal]})
	}
	return p
}

// attachFailed shows the model turns fs, which failed after a message, with the last of
// turns: the message shown last by then.
func attachFailed(turns []turnView, fs []failedView) {
	if len(fs) > 0 && len(turns) > 0 {
		turns[len(turns)-1].Failed = append(turns[len(turns)-1].Failed, fs...)
	}
}

// readMessage reads one saved message in the agent runtime's form, or keeps its JSON
// when it is in another.
func readMessage(m json.RawMessage) messageView {
	var mv messageView
	if err := json.Unmarshal(m, &mv); err != nil || mv.Role == "" {
		return messageView{Raw: indentJSON(m)}
	}
	return mv
}

// newTurn prepares message mv for a page: its text with long JSON put in words, and its
// calls with their arguments as tables. Its calls' answers are the caller's to attach.
func newTurn(mv messageView) turnView {
	t := turnView{Role: mv.Role, Raw: mv.Raw}
	t.Text, t.RawText = shownText(mv.Text)
	for _, c := range mv.Calls {
		t.Calls = append(t.Calls, newCallTurn(c))
	}
	return t
}

// viewKey is a short digest of what t shows, its Operations' states included.
func viewKey(t turnView) string {
	b, err := json.Marshal(t)
	if err != nil {
		return "x"
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// selectedConversation is the conversation an Agent's page shows in its centre: the one
// ?conversation= names, else the one saved last; none when the Agent has none.
func (s *Server) selectedConversation(r *http.Request, v visit, a contract.Agent, convs []contract.ConversationSummary, ops []opView) (*convPane, error) {
	id := contract.ConversationID(r.URL.Query().Get("conversation"))
	if id == "" && len(convs) > 0 {
		id = convs[0].ID // newest first
	}
	if id == "" {
		return nil, nil
	}
	c, err := s.auth.Conversation(r.Context(), v.caller, v.project, string(a.ID), id)
	if err != nil {
		return nil, err
	}
	p := conversationPane(c, ops, maxShownResult)
	return &p, nil
}

// maxAgentCases is how many of the Cases an Agent opened its page lists, newest first.
const maxAgentCases = 10

// agentCases is the Cases agent opened, newest first.
func (s *Server) agentCases(r *http.Request, v visit, a contract.Agent) ([]caseRow, error) {
	cs, err := s.auth.Cases(r.Context(), v.caller, v.project)
	if err != nil {
		return nil, err
	}
	by := contract.NewPrincipal(contract.PrincipalAgent, string(a.ID))
	var out []caseRow
	for _, c := range slices.Backward(cs) {
		if c.OpenedBy != by || len(out) == maxAgentCases {
			continue
		}
		out = append(out, caseRow{Case: c, Href: caseHref(v.project, c.CaseID), Key: keyText(c.BusinessKey), Certified: certifiedOf(c)})
	}
	return out, nil
}
