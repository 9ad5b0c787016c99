package agent

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/price"
)

// Price is what a model charges, in US dollars per million tokens: the one price table's
// entry ([price.Price]).
type Price = price.Price

// cost is the price of u at p, in US dollars.
func cost(p Price, u Usage) float64 { return p.Cost(u.InputTokens, u.OutputTokens) }

// Prices maps an exact model name to its [Price].
type Prices map[string]Price

// DefaultPrices returns a new copy of the one price table ([price.All]) by model name.
// Prices change; a price file ([ParsePrices]) overrides any entry.
func DefaultPrices() Prices {
	out := Prices{}
	for k, v := range price.All() {
		out[k.Model] = v
	}
	return out
}

// Lookup finds the price of exactly model. A name that merely starts with a priced one is
// not priced as it: "claude-opus-4-5" costs a third of "claude-opus-4", and a dated name
// the table lacks is unpriced until a price file names it.
func (p Prices) Lookup(model string) (Price, bool) {
	pr, ok := p[model]
	return pr, ok
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
			return nil, contract.Errorf(contract.CodeModelConfig, "a price entry has an empty model name; name the model exactly as its endpoint knows it")
		}
	}
	return Prices(f.Prices), nil
}

// formatUSD prints dollars with enough digits for small runs.
func formatUSD(v float64) string { return fmt.Sprintf("$%.4f", v) }
