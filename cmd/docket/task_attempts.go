package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// maxShownAttempts bounds the model turns docket task show lists with their attempts:
// the newest are shown.
const maxShownAttempts = 20

// writeAttempts prints, after a task, the model turns of its conversation whose request
// was sent again, with each failed attempt and the wait after it, and the model turns
// that failed, with each attempt up to the one they gave up on (docs/workbench.md, Model
// retries). A conversation not saved yet prints nothing; one that cannot be read is said
// on stderr, the task being shown all the same.
func writeAttempts(ctx context.Context, e *env, cl *client, project string, t contract.Task) error {
	c, err := cl.api.Conversation(ctx, project, string(t.Agent), string(t.Conversation))
	if contract.CodeOf(err) == contract.CodeNotFound {
		return nil
	}
	if err != nil {
		_, werr := fmt.Fprintf(e.Stderr, "docket task show: the model turns of conversation %s cannot be read: %v\n", t.Conversation, err)
		return werr
	}
	w := e.Stdout
	lines := attemptLines(c)
	if len(lines) > maxShownAttempts {
		lines = append([]string{fmt.Sprintf("… %d earlier model turns with retries", len(lines)-maxShownAttempts)}, lines[len(lines)-maxShownAttempts:]...)
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// attemptLines says, in the order they happened, each model turn of c that was sent
// again and each that failed. A state or message in another form (a runtime other than
// docket's saved it) says nothing: the task is shown all the same.
func attemptLines(c contract.Conversation) []string {
	var st struct {
		Failed []struct {
			Model    string                  `json:"model"`
			At       time.Time               `json:"at"`
			After    int                     `json:"after"`
			Code     contract.Code           `json:"code"`
			Attempts []contract.ModelAttempt `json:"attempts"`
		} `json:"failed"`
	}
	if len(c.State) > 0 && json.Unmarshal(c.State, &st) != nil {
		st.Failed = nil
	}
	var lines []string
	failed := 0
	turn := 0
	for i := 0; i <= len(c.Messages); i++ {
		for ; failed < len(st.Failed) && (st.Failed[failed].After <= i || i == len(c.Messages)); failed++ {
			f := st.Failed[failed]
			lines = append(lines, fmt.Sprintf("model turn %d failed at %s with %s after %d attempt(s) at %s: %s",
				turn+1, f.At.Format(time.RFC3339), f.Code, contract.ModelAttemptsMade(f.Attempts), f.Model, contract.ModelAttemptsText(f.Attempts, true)))
		}
		if i == len(c.Messages) {
			break
		}
		var m struct {
			Role string `json:"role"`
			Turn *struct {
				Retries []contract.ModelAttempt `json:"retries"`
			} `json:"turn"`
		}
		if json.Unmarshal(c.Messages[i], &m) != nil || m.Role != "assistant" {
			continue // a message in another form, or not the model's
		}
		turn++
		if m.Turn != nil && len(m.Turn.Retries) > 0 {
			lines = append(lines, fmt.Sprintf("model turn %d was sent %d times: %s", turn, contract.ModelAttemptsMade(m.Turn.Retries)+1, contract.ModelAttemptsText(m.Turn.Retries, false)))
		}
	}
	return lines
}
