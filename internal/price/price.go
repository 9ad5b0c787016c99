// Package price is the one table of what model providers charge for tokens, keyed by the
// exact provider and model name: the runtime's run budgets and the authority's budgets
// read it, and a model it does not name is counted in tokens only.
package price

import (
	"math"
	"sync"
)

// Price is what a model charges, in US dollars per million tokens.
type Price struct {
	InputPerMTok  float64 `toml:"input_usd_per_mtok" json:"inputUsdPerMTok"`
	OutputPerMTok float64 `toml:"output_usd_per_mtok" json:"outputUsdPerMTok"`
}

// Cost is the price of in input and out output tokens, in US dollars.
func (p Price) Cost(in, out int64) float64 {
	return (float64(in)*p.InputPerMTok + float64(out)*p.OutputPerMTok) / 1e6
}

// MicroUSD is [Price.Cost] in millionths of a US dollar, rounded up, the unit the
// authority keeps spend in so that sums never drift.
func (p Price) MicroUSD(in, out int64) int64 {
	return int64(math.Ceil(float64(in)*p.InputPerMTok + float64(out)*p.OutputPerMTok))
}

// Key names one model of one provider exactly: "claude-opus-4-1-20250805" is not
// "claude-opus-4-20250514", and neither is priced as the other.
type Key struct {
	Provider string // a provider name of contract.Providers: "anthropic", "openai"
	Model    string // the model name as the endpoint knows it
}

// table holds list prices of common models when it was written, by exact name, aliases
// included. Prices change; a runtime's price file overrides an entry of its run budgets.
// Built at its first use, not at every docket process's start (docs/coding-agents.md,
// "Speed").
var table = sync.OnceValue(func() map[Key]Price {
	return map[Key]Price{
		{"anthropic", "claude-opus-4-20250514"}:     {15, 75},
		{"anthropic", "claude-opus-4-0"}:            {15, 75},
		{"anthropic", "claude-opus-4-1-20250805"}:   {15, 75},
		{"anthropic", "claude-opus-4-1"}:            {15, 75},
		{"anthropic", "claude-opus-4-5-20251101"}:   {5, 25},
		{"anthropic", "claude-opus-4-5"}:            {5, 25},
		{"anthropic", "claude-sonnet-4-20250514"}:   {3, 15},
		{"anthropic", "claude-sonnet-4-0"}:          {3, 15},
		{"anthropic", "claude-sonnet-4-5-20250929"}: {3, 15},
		{"anthropic", "claude-sonnet-4-5"}:          {3, 15},
		{"anthropic", "claude-3-7-sonnet-20250219"}: {3, 15},
		{"anthropic", "claude-3-7-sonnet-latest"}:   {3, 15},
		{"anthropic", "claude-haiku-4-5-20251001"}:  {1, 5},
		{"anthropic", "claude-haiku-4-5"}:           {1, 5},
		{"anthropic", "claude-3-5-haiku-20241022"}:  {0.8, 4},
		{"anthropic", "claude-3-5-haiku-latest"}:    {0.8, 4},
		{"openai", "gpt-4o"}:                        {2.5, 10},
		{"openai", "gpt-4o-2024-08-06"}:             {2.5, 10},
		{"openai", "gpt-4o-2024-11-20"}:             {2.5, 10},
		{"openai", "gpt-4o-mini"}:                   {0.15, 0.6},
		{"openai", "gpt-4o-mini-2024-07-18"}:        {0.15, 0.6},
		{"openai", "gpt-4.1"}:                       {2, 8},
		{"openai", "gpt-4.1-2025-04-14"}:            {2, 8},
		{"openai", "gpt-4.1-mini"}:                  {0.4, 1.6},
		{"openai", "gpt-4.1-mini-2025-04-14"}:       {0.4, 1.6},
	}
})

// Lookup returns the price of exactly provider's model; ok is false for a model the
// table does not name, which is then counted in tokens only.
func Lookup(provider, model string) (Price, bool) {
	p, ok := table()[Key{provider, model}]
	return p, ok
}

// All returns a new copy of the table.
func All() map[Key]Price {
	t := table()
	out := make(map[Key]Price, len(t))
	for k, v := range t {
		out[k] = v
	}
	return out
}
