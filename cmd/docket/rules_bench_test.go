package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/floor"
)

// BenchmarkRulesEvalProcess runs `docket rules eval` as a whole process (built once, output
// to /dev/null): the transitive closure of the 1,000-chain (500,500 derived facts), in text,
// JSON and --count, and one arithmetic rule over 100,000 facts from JSON lines. The floor
// variant runs the datalog floor's closure of the same chain as a whole process, so that
// the ratio is measured in the same run: -bench RulesEvalProcess -count 5.
func BenchmarkRulesEvalProcess(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "docket")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			b.Fatal(err)
		}
		return p
	}
	var chain, inputs strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&chain, `{"predicate": "edge", "args": {"from": %d, "to": %d}}`+"\n", i, i+1)
	}
	for i := range 100_000 {
		fmt.Fprintf(&inputs, `{"predicate": "calculation_input", "args": {"job_id": "calc-%06d", "unit_price_cents": %d, "quantity": %d, "shipping_cents": 3000}, "tier": "attested"}`+"\n", i, 100+i%5000, 1+i%9)
	}
	path := write("path.dl", "path(from: X, to: Y) :- edge(from: X, to: Y).\npath(from: X, to: Z) :- edge(from: X, to: Y), path(from: Y, to: Z).\n")
	calc := write("calc.dl", "calculation_result(job_id: J, subtotal: S, total: T) :-\n    calculation_input(job_id: J, unit_price_cents: U, quantity: Q, shipping_cents: H),\n    mul(left: U, right: Q, result: S),\n    add(left: S, right: H, result: T).\n")
	chainFile, inputFile := write("chain.jsonl", chain.String()), write("inputs.jsonl", inputs.String())

	run := func(b *testing.B, name string, args ...string) {
		b.Helper()
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer null.Close()
		var took []float64
		for b.Loop() {
			cmd := exec.Command(name, args...)
			cmd.Stdout, cmd.Stderr = null, os.Stderr
			start := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%s %v: %v", name, args, err)
			}
			took = append(took, float64(time.Since(start).Microseconds())/1000)
		}
		b.ReportMetric(floor.Median(took), "median-ms")
	}
	b.Run("tc1000-text", func(b *testing.B) { run(b, bin, "rules", "eval", path, "--facts", chainFile) })
	b.Run("tc1000-json", func(b *testing.B) { run(b, bin, "rules", "eval", path, "--facts", chainFile, "-o", "json") })
	b.Run("tc1000-count", func(b *testing.B) { run(b, bin, "rules", "eval", path, "--facts", chainFile, "--count") })
	b.Run("tc1000-floor", func(b *testing.B) { run(b, floor.Binary(b, "datalog-floor"), "-tc", "1000", "-runs", "1") })
	b.Run("calc100k-json", func(b *testing.B) { run(b, bin, "rules", "eval", calc, "--facts", inputFile, "-o", "json") })
	b.Run("calc100k-count", func(b *testing.B) { run(b, bin, "rules", "eval", calc, "--facts", inputFile, "--count") })
}
