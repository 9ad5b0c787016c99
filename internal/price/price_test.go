package price_test

import (
	"testing"

	"github.com/docketrun/docket/internal/price"
)

// TestLookup_Exact: a model is priced by its exact provider and name; a longer name that
// starts with a priced one is not priced as it (claude-opus-4-5 is not claude-opus-4).
func TestLookup_Exact(t *testing.T) {
	tests := []struct {
		name            string
		provider, model string
		want            price.Price
		ok              bool
	}{
		{"dated name", "anthropic", "claude-opus-4-20250514", price.Price{InputPerMTok: 15, OutputPerMTok: 75}, true},
		{"a newer model that starts like an older one", "anthropic", "claude-opus-4-5-20251101", price.Price{InputPerMTok: 5, OutputPerMTok: 25}, true},
		{"an unknown suffix is not priced", "anthropic", "claude-opus-4-20990101", price.Price{}, false},
		{"a bare family name is not priced", "anthropic", "claude-opus-4", price.Price{}, false},
		{"the provider is part of the key", "openai", "claude-sonnet-4-20250514", price.Price{}, false},
		{"gpt-4o-mini is not gpt-4o", "openai", "gpt-4o-mini", price.Price{InputPerMTok: 0.15, OutputPerMTok: 0.6}, true},
		{"an unknown dated gpt-4o", "openai", "gpt-4o-2099-01-01", price.Price{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := price.Lookup(tt.provider, tt.model)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Lookup(%q, %q) = %+v, %v; want %+v, %v", tt.provider, tt.model, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestPrice_MicroUSD(t *testing.T) {
	p := price.Price{InputPerMTok: 3, OutputPerMTok: 15}
	if got := p.MicroUSD(1000, 100); got != 4500 {
		t.Errorf("MicroUSD(1000, 100) = %d, want 4500 (3000 + 1500 millionths)", got)
	}
	if got := (price.Price{InputPerMTok: 0.15}).MicroUSD(1, 0); got != 1 {
		t.Errorf("a part of a millionth is charged as one: got %d", got)
	}
}
