package openai_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/contract"
)

// A model server that accepts the connection and never answers, or starts an answer and
// stops, fails the turn at its deadline with model_stalled, naming the wait; while it
// waits, the Watch says on what (docs/workbench.md, Model deadlines).
func TestClient_Deadlines(t *testing.T) {
	tests := []struct {
		name  string
		url   func(testing.TB) string
		phase string
		says  string
	}{
		{"accepts and never answers", providertest.Silent, contract.RunWaitFirstByte, "sent no first byte within 300ms"},
		{"sends headers then stalls", providertest.Stalling, contract.RunWaitIdle, "sent nothing for 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.url(t)
			watch := &agent.Watch{}
			c, err := openai.New(openai.Config{URL: url, Model: "m", Deadlines: agent.Deadlines{FirstByte: 300 * time.Millisecond, Idle: 300 * time.Millisecond, Watch: watch}})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1) // written once, when the turn ends
			go func() {
				_, err := c.Turn(t.Context(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: "hi"}}}, nil)
				done <- err
			}()
			var seen []agent.ModelWait // the waits the Watch showed while the turn ran
			var err2 error
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			bound := time.NewTimer(30 * time.Second)
			defer bound.Stop()
		wait:
			for {
				select {
				case err2 = <-done:
					break wait
				case <-tick.C:
					if w, ok := watch.Current(); ok {
						seen = append(seen, w)
					}
				case <-bound.C:
					t.Fatal("the turn never ended: the deadline did not hold")
				}
			}
			pe, ok := errors.AsType[*agent.ProviderError](err2)
			if !ok || pe.Kind != agent.KindStalled || pe.Code() != contract.CodeModelStalled || !pe.Retryable() {
				t.Fatalf("Turn = %v, want a *ProviderError of kind stalled (model_stalled, retried as a failure that means later)", err2)
			}
			if !strings.Contains(err2.Error(), tt.says) || !strings.Contains(err2.Error(), url) {
				t.Errorf("Turn = %q, want it to name the model at %s and say %q", err2, url, tt.says)
			}
			if _, ok := watch.Current(); ok {
				t.Errorf("the Watch still shows a wait after the turn ended")
			}
			var phases []string
			for _, w := range seen {
				if w.Origin != url || !w.Deadline.After(w.Since) {
					t.Errorf("the Watch showed %+v, want the wait at %s with a deadline after its start", w, url)
				}
				phases = append(phases, w.Phase)
			}
			if len(phases) == 0 || phases[len(phases)-1] != tt.phase {
				t.Errorf("the Watch showed phases %v, want it to end in %s", phases, tt.phase)
			}
		})
	}
}
