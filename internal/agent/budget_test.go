package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

func TestMeter_Record(t *testing.T) {
	prices := agent.Prices{"m": {InputPerMTok: 3, OutputPerMTok: 15}}
	turn := agent.Usage{InputTokens: 1000, OutputTokens: 100} // $0.0045
	tests := []struct {
		name   string
		budget agent.Budget
		turns  int // turns recorded before the error, the failing one included
		kind   agent.BudgetKind
		text   string
	}{
		{"turns", agent.Budget{MaxTurns: 3}, 3, agent.BudgetTurns, "the run's turns budget is spent: used 3 of 3 (3 turns, 3000 input + 300 output tokens, $0.0135)"},
		{"tokens", agent.Budget{MaxTokens: 2500}, 3, agent.BudgetTokens, "the run's tokens budget is spent: used 3300 of 2500"},
		{"usd", agent.Budget{MaxUSD: 0.01}, 3, agent.BudgetUSD, "the run's usd budget is spent: used $0.0135 of $0.0100"},
		{"turns checked first", agent.Budget{MaxTurns: 1, MaxTokens: 1, MaxUSD: 0.0001}, 1, agent.BudgetTurns, "the run's turns budget"},
		{"unbounded", agent.Budget{}, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := agent.NewMeter(tt.budget, "m", prices)
			if err != nil {
				t.Fatal(err)
			}
			var got error
			n := 0
			for n < 10 && got == nil {
				got = m.Record(turn)
				n++
			}
			if tt.kind == "" {
				if got != nil {
					t.Fatalf("Record = %v after %d turns, want no bound", got, n)
				}
				return
			}
			be, ok := errors.AsType[*agent.BudgetError](got)
			if !ok || be.Kind != tt.kind || n != tt.turns {
				t.Fatalf("Record = %v after %d turns, want a %s BudgetError after %d", got, n, tt.kind, tt.turns)
			}
			if be.Code() != contract.CodeBudgetExceeded || !strings.Contains(be.Error(), tt.text) || !strings.HasPrefix(be.Error(), "budget_exceeded: ") {
				t.Errorf("Error() = %q, want it to start with the code and say %q", be.Error(), tt.text)
			}
		})
	}
}

func TestMeter_Spent(t *testing.T) {
	m, err := agent.NewMeter(agent.Budget{}, "claude-sonnet-4-20250514", agent.DefaultPrices())
	if err != nil {
		t.Fatal(err)
	}
	m.Record(agent.Usage{InputTokens: 1_000_000, OutputTokens: 0})
	m.Record(agent.Usage{InputTokens: 0, OutputTokens: 1_000_000})
	want := agent.Spent{Turns: 2, InputTokens: 1_000_000, OutputTokens: 1_000_000, USD: 18}
	if diff := cmp.Diff(want, m.Spent()); diff != "" {
		t.Errorf("Spent (-want +got):\n%s", diff)
	}
}

func TestNewMeter_refuses(t *testing.T) {
	tests := []struct {
		name   string
		budget agent.Budget
		model  string
		teach  string
	}{
		{"usd bound on an unpriced model", agent.Budget{MaxUSD: 1}, "local-llama", `add it to the price file as [prices."local-llama"]`},
		{"negative bound", agent.Budget{MaxTurns: -1}, "m", "zero (no bound) or positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := agent.NewMeter(tt.budget, tt.model, agent.DefaultPrices())
			if contract.CodeOf(err) != contract.CodeModelConfig || !strings.Contains(err.Error(), tt.teach) {
				t.Errorf("NewMeter error = %v, want %s saying %q", err, contract.CodeModelConfig, tt.teach)
			}
		})
	}
	if _, err := agent.NewMeter(agent.Budget{MaxTurns: 5}, "local-llama", agent.DefaultPrices()); err != nil {
		t.Errorf("an unpriced model without a USD bound is refused: %v", err)
	}
}
