package syntax_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/board/syntax"
)

// benchProgram is a rule file of n rules and n facts in the style of DESIGN.md §3.3.
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
