package syntax_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/board/syntax"
	"github.com/docketrun/docket/internal/floor"
)

// benchProgram is a rule file of n rules and n facts in the style of the verified calculation's rules.
func benchProgram(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "# rule %d\n", i)
		fmt.Fprintf(&b, "result_%d(job_id: J, subtotal: S, total: T) :-\n", i)
		fmt.Fprintf(&b, "    input_%d(job_id: J, unit_price_cents: U, quantity: Q, shipping_cents: H),\n", i)
		b.WriteString("    mul(left: U, right: Q, result: S),\n    add(left: S, right: H, result: T),\n    not blocked(job_id: J, by: _).\n")
		fmt.Fprintf(&b, "input_%d(job_id: \"calc-%03d\", unit_price_cents: 129900, quantity: 2, shipping_cents: 3000, rate: 0.25).\n", i, i)
	}
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	src := benchProgram(1000)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := syntax.Parse("bench.dl", src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPrint(b *testing.B) {
	stmts, err := syntax.Parse("bench.dl", benchProgram(1000))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		syntax.Print(stmts)
	}
}

// benchFacts is a facts file of n JSON lines, the inputs of one arithmetic rule.
func benchFacts(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"predicate": "calculation_input", "args": {"job_id": "calc-%06d", "node": "n%d", "unit_price_cents": %d, "quantity": %d, "shipping_cents": 3000}, "tier": "attested"}`+"\n", i, i%7, 100+i%5000, 1+i%9)
	}
	return []byte(b.String())
}

// BenchmarkParseJSONFacts decodes 100,000 facts from JSON lines; the floor variant has the
// datalog floor decode the same file with encoding/json, in the same run.
func BenchmarkParseJSONFacts(b *testing.B) {
	const n = 100_000
	src := benchFacts(n)
	b.Run("docket", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			facts, err := syntax.ParseJSONFacts("bench.jsonl", src)
			if err != nil || len(facts) != n {
				b.Fatal(len(facts), err)
			}
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "facts/s")
	})
	b.Run("floor", func(b *testing.B) {
		bin := floor.Binary(b, "datalog-floor")
		file := filepath.Join(b.TempDir(), "bench.jsonl")
		if err := os.WriteFile(file, src, 0o600); err != nil {
			b.Fatal(err)
		}
		var ms []float64
		for b.Loop() {
			ms = append(ms, floor.MedianMS(b, bin, "-jsonl", file, "-runs", "1"))
		}
		b.ReportMetric(float64(n)/(floor.Median(ms)/1000), "facts/s")
	})
}
