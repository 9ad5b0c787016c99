package agent_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// TestPrices_Lookup: prices match exact model names only. A name that starts with a
// priced one (claude-opus-4-5 after claude-opus-4) was once priced as it, by prefix.
func TestPrices_Lookup(t *testing.T) {
	p := agent.Prices{"gpt-4o": {InputPerMTok: 2.5}, "gpt-4o-mini": {InputPerMTok: 0.15}, "exact": {InputPerMTok: 1}, "claude-opus-4": {InputPerMTok: 15}}
	tests := []struct {
		model string
		want  float64
		ok    bool
	}{
		{"exact", 1, true},
		{"gpt-4o-mini", 0.15, true},
		{"gpt-4o-2024-08-06", 0, false},
		{"gpt-4o-mini-2024-07-18", 0, false},
		{"claude-opus-4-5", 0, false},
		{"gpt-4", 0, false},
	}
	for _, tt := range tests {
		got, ok := p.Lookup(tt.model)
		if ok != tt.ok || got.InputPerMTok != tt.want {
			t.Errorf("Lookup(%q) = %v, %v, want %v, %v", tt.model, got.InputPerMTok, ok, tt.want, tt.ok)
		}
	}
}

func TestParsePrices(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		want  agent.Prices
		teach string
	}{
		{"two models", "[prices.\"local-llama\"]\ninput_usd_per_mtok = 0\noutput_usd_per_mtok = 0\n[prices.\"gpt-4o\"]\ninput_usd_per_mtok = 2.0\noutput_usd_per_mtok = 8.5\n",
			agent.Prices{"local-llama": {}, "gpt-4o": {InputPerMTok: 2, OutputPerMTok: 8.5}}, ""},
		{"typo", "[prices.m]\ninput_usd_per_mtoken = 1\n", nil, "unknown keys prices.m.input_usd_per_mtoken"},
		{"negative", "[prices.m]\ninput_usd_per_mtok = -1\n", nil, "non-negative"},
		{"not TOML", "[prices", nil, "not valid TOML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := agent.ParsePrices([]byte(tt.text))
			if tt.teach != "" {
				if contract.CodeOf(err) != contract.CodeModelConfig || !strings.Contains(err.Error(), tt.teach) {
					t.Fatalf("ParsePrices error = %v, want %s saying %q", err, contract.CodeModelConfig, tt.teach)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParsePrices (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrices_With(t *testing.T) {
	base := agent.DefaultPrices()
	over := agent.Prices{"gpt-4o": {InputPerMTok: 1, OutputPerMTok: 2}, "mine": {InputPerMTok: 3}}
	merged := base.With(over)
	if p, _ := merged.Lookup("gpt-4o"); p != over["gpt-4o"] {
		t.Errorf("override not applied: %+v", p)
	}
	if _, ok := merged.Lookup("mine"); !ok {
		t.Errorf("new entry missing")
	}
	if p, _ := base.Lookup("gpt-4o"); p == over["gpt-4o"] {
		t.Errorf("With changed its receiver")
	}
}

// TestDefaultPrices_Exact: the built-in table prices dated names exactly and leaves a
// newer model that starts like an older one to its own entry.
func TestDefaultPrices_Exact(t *testing.T) {
	p := agent.DefaultPrices()
	if got, ok := p.Lookup("claude-opus-4-5-20251101"); !ok || got.InputPerMTok != 5 {
		t.Errorf("claude-opus-4-5-20251101 = %+v, %v; want its own price (5 per million input tokens)", got, ok)
	}
	if got, ok := p.Lookup("claude-opus-4-7"); ok {
		t.Errorf("claude-opus-4-7 priced %+v; an unknown model is not priced", got)
	}
}
