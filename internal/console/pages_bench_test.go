package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/operation"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// Sizes of the benchmarks' Board.
const (
	benchFacts  = 100_000
	benchGroups = 16 // wide_ok rests on this many grp facts, each on this many items
)

// wideCapability declares Case Type wide, whose acceptance wide_ok rests on benchGroups
// derived grp facts, each on benchGroups asserted items: 1 + 16 + 256 nodes, which the
// derivation tree's bound cuts to 200.
func wideCapability() map[string]string {
	lits := func(pred, fixed string) string {
		var ls []string
		for i := range benchGroups {
			ls = append(ls, fmt.Sprintf("%s(job: J, %s%d)", pred, fixed, i))
		}
		return strings.Join(ls, ", ")
	}
	return map[string]string{
		"capability.toml": `id = "bench.wide"
version = "1.0.0"
title = "A wide derivation"

[[case_type]]
name = "wide"
title = "Wide"
description = "A Case whose acceptance rests on many facts."
key = { predicate = "item", args = ["job"] }
opening = "item"
opening_floor = "asserted"
acceptance = "wide_ok"
minimum_grounding_floor = "asserted"

[[action]]
name = "add_item"
description = "Add an item."
approval = "none"
effects = ["item(job: ?job, g: ?g, i: ?i)"]

[[action.param]]
name = "job"
type = "string"

[[action.param]]
name = "g"
type = "integer"

[[action.param]]
name = "i"
type = "integer"
`,
		"wide.dl": "@wide_ok\nwide_ok(job: J) :- " + lits("grp", "g: ") + ".\n\n" +
			"@grp\ngrp(job: J, g: G) :- " + strings.ReplaceAll(lits("item", "g: G, i: "), "job: J, g: G, i: ", "job: J, g: G, i: ") + ".\n",
	}
}

// benchConsole is a console over a Board of benchFacts facts with Case case-1 of type
// wide certified by a 200-node derivation, and a signed-in member's page request.
func benchConsole(b *testing.B) (*testServer, func(path string) *http.Request) {
	b.Helper()
	s := newTestServer(b, console.Config{})
	ctx := b.Context()
	admin := mustCaller(b, s)
	if _, err := s.a.InstallCapability(ctx, admin, "default", contract.CapabilityUpload{Files: wideCapability()}); err != nil {
		b.Fatal(err)
	}
	tok, err := s.a.Directory().CreateAgent(ctx, admin, "default", contract.CreateAgentRequest{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	ag, err := s.a.Directory().Authenticate(ctx, identity.Token(tok.Token))
	if err != nil {
		b.Fatal(err)
	}
	call := func(tool string, in any) {
		ans, err := s.ops.Call(ctx, ag, operation.Call{Tool: tool, Input: in, Delivered: func(int64) bool { return true }})
		if err != nil || !ans.Result.Accepted {
			b.Fatalf("Call(%s) = %+v, %v", tool, ans.Result, err)
		}
	}
	var ops []contract.Operation
	flush := func() {
		call(contract.ToolApplyBatch, &contract.Batch{Operations: ops})
		ops = ops[:0]
	}
	add := func(a contract.Atom) {
		ops = append(ops, contract.Operation{Op: contract.OpAssertFact, Atom: &a})
		if len(ops) == contract.MaxBatchOps {
			flush()
		}
	}
	iv := func(n int) contract.Value {
		v, err := contract.IntValue(int64(n))
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	for g := range benchGroups {
		for i := range benchGroups {
			add(contract.Atom{Predicate: "item", Args: contract.Args{"job": contract.StringValue("w"), "g": iv(g), "i": iv(i)}})
		}
	}
	for n := range benchFacts - benchGroups*benchGroups {
		add(contract.Atom{Predicate: "reading", Args: contract.Args{"sensor": iv(n % 100), "n": iv(n)}})
	}
	flush()
	call(contract.ToolOpenCase, &contract.OpenCaseInput{CaseType: "wide", BusinessKey: contract.Args{"job": contract.StringValue("w")}})
	sess, err := s.a.Directory().Login(ctx, "ada", testPassphrase, 0)
	if err != nil {
		b.Fatal(err)
	}
	return s, func(path string) *http.Request {
		r := httptest.NewRequest("GET", s.URL+path, nil)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, s.Listener.Addr()))
		r.AddCookie(&http.Cookie{Name: "docket_session", Value: sess.Token.String()})
		return r
	}
}

// BenchmarkPages_Record is the server time of the Board search page and of a Case page
// with a 200-node derivation, on a Board of 100,000 facts: each iteration serves one
// page through the console's handler, as a browser's request reaches it.
func BenchmarkPages_Record(b *testing.B) {
	s, get := benchConsole(b)
	h := s.Config.Handler
	pages := []struct{ name, path, want string }{
		{"board-search", "/projects/default/board?predicate=reading&args=sensor%3D7", "The first 100 facts"},
		{"case-200-nodes", "/projects/default/cases/case-1", "200 nodes, 73 more left out by the bounds."},
		{"fact-200-nodes", "/projects/default/board/", "200 nodes"},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			path := p.path
			if p.name == "fact-200-nodes" {
				path += acceptanceNode(b, h, get)
			}
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, get(path))
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), p.want) {
					b.Fatalf("GET %s = %d, want 200 with %q:\n%.2000s", path, rec.Code, p.want, rec.Body.String())
				}
			}
		})
	}
}

// acceptanceNode is the id of case-1's acceptance, read from its page.
func acceptanceNode(b *testing.B, h http.Handler, get func(string) *http.Request) string {
	b.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, get("/projects/default/cases/case-1"))
	_, rest, ok := strings.Cut(rec.Body.String(), `<dt>Acceptance</dt><dd><code>`)
	if !ok {
		_, rest, ok = strings.Cut(rec.Body.String(), `class="node-link" href="/projects/default/board/`)
	}
	id, _, _ := strings.Cut(rest, `"`)
	if !ok || id == "" {
		b.Fatalf("case-1's page names no acceptance node")
	}
	return id
}
