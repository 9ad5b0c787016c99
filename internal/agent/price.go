package agent

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/docketrun/docket/internal/contract"
)

// Price is what a model charges, in US dollars per million tokens.
type Price struct {
	InputPerMTok  float64 `toml:"input_usd_per_mtok"`
	OutputPerMTok float64 `toml:"output_usd_per_mtok"`
}

// Cost is the price of u in US dollars.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.InputTokens)*p.InputPerMTok + float64(u.OutputTokens)*p.OutputPerMTok) / 1e6
}

// Prices maps a model name, or a prefix of model names, to its [Price].
type Prices map[string]Price

// DefaultPrices returns a new copy of the built-in table: list prices of common models when
// this table was written. Prices change; a price file ([ParsePrices]) overrides any entry.
func DefaultPrices() Prices {
	return Prices{
		"claude-opus-4":     {InputPerMTok: 15, OutputPerMTok: 75},
		"claude-sonnet-4":   {InputPerMTok: 3, OutputPerMTok: 15},
		"claude-3-7-sonnet": {InputPerMTok: 3, OutputPerMTok: 15},
		"claude-3-5-haiku":  {InputPerMTok: 0.8, OutputPerMTok: 4},
		"gpt-4o-mini":       {InputPerMTok: 0.15, OutputPerMTok: 0.6},
		"gpt-4o":            {InputPerMTok: 2.5, OutputPerMTok: 10},
		"gpt-4.1-mini":      {InputPerMTok: 0.4, OutputPerMTok: 1.6},
		"gpt-4.1":           {InputPerMTok: 2, OutputPerMTok: 8},
	}
}

// Lookup finds model's price: an exact entry, else the longest entry that is a prefix of
// model, so "claude-sonnet-4" prices "claude-sonnet-4-20250514".
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best, found := "", false
	for name := range p {
		if strings.HasPrefix(model, name) && len(name) > len(best) {
			best, found = name, true
		}
	}
	return p[best], found
}

// With returns a new table holding p's entries overridden by over's.
func (p Prices) With(over Prices) Prices {
	out := make(Prices, len(p)+len(over))
	for k, v := range p {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// priceFile is the TOML shape of a price file:
//
//	[prices."claude-sonnet-4"]
//	input_usd_per_mtok = 3.0
//	output_usd_per_mtok = 15.0
type priceFile struct {
	Prices map[string]Price `toml:"prices"`
}

// ParsePrices reads a price file (TOML, see priceFile). Unknown keys, negative or
// non-finite prices are refused, so a typo cannot silently price a model at zero.
func ParsePrices(data []byte) (Prices, error) {
	var f priceFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, &contract.Error{Code: contract.CodeModelConfig, Teaching: "the price file is not valid TOML; write [prices.\"MODEL\"] tables with input_usd_per_mtok and output_usd_per_mtok", Err: err}
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		sort.Strings(keys)
		return nil, contract.Errorf(contract.CodeModelConfig, "the price file has unknown keys %s; only [prices.\"MODEL\"] with input_usd_per_mtok and output_usd_per_mtok are read", strings.Join(keys, ", "))
	}
	for name, pr := range f.Prices {
		for _, v := range []float64{pr.InputPerMTok, pr.OutputPerMTok} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, contract.Errorf(contract.CodeModelConfig, "the price of %s is %v; prices are non-negative dollars per million tokens", name, v)
			}
		}
		if name == "" {
			return nil, contract.Errorf(contract.CodeModelConfig, "a price entry has an empty model name; name the model or a prefix of its name")
		}
	}
	return Prices(f.Prices), nil
}

// formatUSD prints dollars with enough digits for small runs.
func formatUSD(v float64) string { return fmt.Sprintf("$%.4f", v) }
