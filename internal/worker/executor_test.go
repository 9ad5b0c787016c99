package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/grant"
	"github.com/docketrun/docket/internal/worker"
	"github.com/google/go-cmp/cmp"
)

const testConnection contract.ConnectionID = "con_0123456789abcdef"

var (
	testKey = []byte("dkt_con_0123456789abcdef.key")
	testNow = time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
)

const testManifest = `{"format":"docket-worker-tools/1","tools":{
	"acme.report@1":{"adapter":"run","sourceTypes":[],"entry":"bin/report","params":{"month":{"type":"string","required":true}}},
	"acme.stats@1":{"adapter":"run","sourceTypes":["file","db"],"entry":"bin/stats","kind":"read"}}}`

// newExecutor returns an Executor whose run and workspace adapters are fake, and the
// calls they received.
func newExecutor(t testing.TB, run adapterFunc) *worker.Executor {
	t.Helper()
	m, err := worker.ParseManifest([]byte(testManifest), nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := worker.ParseVault([]byte(`{"sources":{"calc":{"type":"file","root":"/srv/calc"},"orders":{"type":"db","dsn":"sqlite:/x.db"},"api":{"type":"http","url":"http://h"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := worker.NewExecutor(worker.Config{Project: "demo", Connection: testConnection, Key: testKey, Manifest: m, Vault: v,
		Adapters: map[string]worker.Adapter{worker.AdapterRun: run, worker.AdapterWorkspace: run},
		Now:      func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// served builds a row as the authority would serve it to wkr-1 at generation 2, after
// edit changes the grant that is signed.
func served(t testing.TB, e *worker.Executor, tool contract.ToolID, args, target string, edit func(*contract.Grant)) contract.WorkRow {
	t.Helper()
	var d contract.ToolDescriptor
	for _, x := range e.Descriptors() {
		if x.Tool == tool {
			d = x
		}
	}
	if d.Tool == "" {
		t.Fatalf("no tool %s", tool)
	}
	return sign(t, d, args, target, edit)
}

// sign builds and signs a row for the Tool d describes, as the authority would serve it
// to wkr-1 at generation 2, after edit changes the grant.
func sign(t testing.TB, d contract.ToolDescriptor, args, target string, edit func(*contract.Grant)) contract.WorkRow {
	t.Helper()
	tool := d.Tool
	spec, _ := json.Marshal(contract.WorkToolSpec{Tool: tool, Digest: d.Digest, Kind: d.Kind})
	row := contract.WorkRow{ID: "w-1", Project: "demo", Invocation: "op-1", Action: "act", Args: json.RawMessage(args),
		Target: json.RawMessage(target), ToolSpec: spec}
	var tg contract.WorkTarget
	if err := json.Unmarshal(row.Target, &tg); err != nil {
		t.Fatal(err)
	}
	rd, err := grant.RequestDigest(row.Args, row.Target, row.ToolSpec)
	if err != nil {
		t.Fatal(err)
	}
	g := contract.Grant{Project: "demo", Invocation: "op-1", Action: "act", Tool: tool, ToolDigest: d.Digest,
		Source: tg.Source, SourceDigest: tg.SourceDigest, Connection: testConnection, WorkerID: "wkr-1", Generation: 2,
		AdapterDigest: d.AdapterDigest, RequestDigest: rd,
		IssuedAt: testNow, ExpiresAt: testNow.Add(time.Minute)}
	if edit != nil {
		edit(&g)
	}
	if row.Grant, err = grant.Sign(testKey, g); err != nil {
		t.Fatal(err)
	}
	return row
}

const noTarget = `{"source":"","sourceType":"","sourceDigest":""}`

func TestExecutor_Prepare(t *testing.T) {
	var got []worker.Call
	e := newExecutor(t, func(_ context.Context, c worker.Call) (worker.Outcome, error) {
		got = append(got, c)
		return worker.OK()
	})
	report := contract.ToolID("acme.report@1")
	stats := contract.ToolID("acme.stats@1")
	readText := worker.WorkspaceTool(worker.OpReadText)
	calc := `{"source":"calc","sourceType":"file","sourceDigest":"sha256:aa"}`
	tests := []struct {
		name       string
		row        func() contract.WorkRow
		worker     string
		generation int64
		code       contract.Code
		refused    bool // the grant verifies, so the row is claimed and reported refused with code
	}{
		{name: "ok source-free", row: func() contract.WorkRow { return served(t, e, report, `{"month":"2026-11"}`, noTarget, nil) }},
		{name: "ok with source", row: func() contract.WorkRow { return served(t, e, readText, `{"path":"a.txt"}`, calc, nil) }},
		{name: "ok source argument agrees", row: func() contract.WorkRow {
			return served(t, e, readText, `{"path":"a.txt","source":"calc"}`, calc, nil)
		}},
		{name: "another instance", worker: "wkr-9", code: contract.CodeGrantMismatch,
			row: func() contract.WorkRow { return served(t, e, report, `{"month":"2026-11"}`, noTarget, nil) }},
		{name: "another generation", generation: 3, code: contract.CodeGrantMismatch,
			row: func() contract.WorkRow { return served(t, e, report, `{"month":"2026-11"}`, noTarget, nil) }},
		{name: "another request", code: contract.CodeGrantMismatch, row: func() contract.WorkRow {
			r := served(t, e, report, `{"month":"2026-11"}`, noTarget, nil)
			r.Args = json.RawMessage(`{"month":"2026-12"}`) // changed after the grant was signed
			return r
		}},
		{name: "another invocation", code: contract.CodeGrantMismatch, row: func() contract.WorkRow {
			r := served(t, e, report, `{"month":"2026-11"}`, noTarget, nil)
			r.Invocation = "op-2"
			return r
		}},
		{name: "expired", code: contract.CodeGrantExpired, row: func() contract.WorkRow {
			return served(t, e, report, `{"month":"2026-11"}`, noTarget, func(g *contract.Grant) { g.ExpiresAt = testNow })
		}},
		{name: "other tool digest", code: contract.CodeToolDigest, row: func() contract.WorkRow {
			r := served(t, e, report, `{"month":"2026-11"}`, noTarget, nil)
			r.ToolSpec = json.RawMessage(`{"tool":"acme.report@1","digest":"sha256:00","kind":"run"}`)
			return r
		}},
		{name: "unknown tool", code: contract.CodeToolUnknown, row: func() contract.WorkRow {
			r := served(t, e, report, `{"month":"2026-11"}`, noTarget, nil)
			r.ToolSpec = json.RawMessage(`{"tool":"acme.other@1","digest":"sha256:00","kind":"run"}`)
			return r
		}},
		{name: "tool held at another digest", refused: true, code: contract.CodeToolDigest, row: func() contract.WorkRow {
			return sign(t, contract.ToolDescriptor{Tool: report, Digest: "sha256:" + strings.Repeat("0", 64), Kind: "run", AdapterDigest: "sha256:aa"}, `{"month":"2026-11"}`, noTarget, nil)
		}},
		{name: "tool this worker lacks", refused: true, code: contract.CodeToolUnknown, row: func() contract.WorkRow {
			return sign(t, contract.ToolDescriptor{Tool: "acme.gone@1", Digest: "sha256:aa", Kind: "run", AdapterDigest: "sha256:aa"}, `{}`, noTarget, nil)
		}},
		{name: "tool spec extra field", code: contract.CodeWorkRow, row: func() contract.WorkRow {
			r := served(t, e, report, `{"month":"2026-11"}`, noTarget, nil)
			r.ToolSpec = json.RawMessage(`{"tool":"acme.report@1","digest":"sha256:00","kind":"run","shell":true}`)
			return r
		}},
		{name: "other project", code: contract.CodeWorkRow, row: func() contract.WorkRow {
			r := served(t, e, report, `{"month":"2026-11"}`, noTarget, nil)
			r.Project = "other"
			return r
		}},
		{name: "source-free given a source", refused: true, code: contract.CodeSourceFreeSource,
			row: func() contract.WorkRow {
				return served(t, e, report, `{"month":"2026-11","source":"calc"}`, noTarget, nil)
			}},
		{name: "source-free given a target", refused: true, code: contract.CodeSourceFreeSource,
			row: func() contract.WorkRow { return served(t, e, report, `{"month":"2026-11"}`, calc, nil) }},
		{name: "no source named", refused: true, code: contract.CodeSourceSelection,
			row: func() contract.WorkRow { return served(t, e, stats, `{}`, noTarget, nil) }},
		{name: "source of the wrong type", refused: true, code: contract.CodeSourceTypeMatch, row: func() contract.WorkRow {
			return served(t, e, stats, `{}`, `{"source":"api","sourceType":"http","sourceDigest":"sha256:aa"}`, nil)
		}},
		{name: "served type differs from vault", refused: true, code: contract.CodeSourceTypeMatch, row: func() contract.WorkRow {
			return served(t, e, stats, `{}`, `{"source":"calc","sourceType":"db","sourceDigest":"sha256:aa"}`, nil)
		}},
		{name: "source not in vault", refused: true, code: contract.CodeSourceUnknown, row: func() contract.WorkRow {
			return served(t, e, stats, `{}`, `{"source":"gone","sourceType":"file","sourceDigest":"sha256:aa"}`, nil)
		}},
		{name: "source argument disagrees", refused: true, code: contract.CodeToolArgs, row: func() contract.WorkRow {
			return served(t, e, readText, `{"path":"a.txt","source":"orders"}`, calc, nil)
		}},
		{name: "unknown argument", refused: true, code: contract.CodeToolArgs,
			row: func() contract.WorkRow {
				return served(t, e, report, `{"month":"2026-11","sql":"DROP TABLE x"}`, noTarget, nil)
			}},
		{name: "missing argument", refused: true, code: contract.CodeToolArgs,
			row: func() contract.WorkRow { return served(t, e, report, `{}`, noTarget, nil) }},
		{name: "wrong type", refused: true, code: contract.CodeToolArgs,
			row: func() contract.WorkRow { return served(t, e, report, `{"month":11}`, noTarget, nil) }},
		{name: "nested argument", refused: true, code: contract.CodeToolArgs,
			row: func() contract.WorkRow { return served(t, e, report, `{"month":{"y":1}}`, noTarget, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wid, gen := "wkr-1", int64(2)
			if tt.worker != "" {
				wid = tt.worker
			}
			if tt.generation != 0 {
				gen = tt.generation
			}
			job, err := e.Prepare(tt.row(), wid, gen)
			code, refused := contract.CodeOf(err), false
			if err == nil && job.Refusal() != nil {
				code, refused = contract.CodeOf(job.Refusal()), true
			}
			if code != tt.code || refused != tt.refused {
				t.Fatalf("Prepare = %v (refusal %v), want code %q refused %v", err, job, tt.code, tt.refused)
			}
			if err != nil {
				return
			}
			got = nil
			r := e.Run(t.Context(), job)
			if refused {
				// The refusal goes back on the hop with its reason; nothing ran.
				if r.OK || r.EffectUnknown || r.Code != tt.code || r.Reason == "" || len(got) != 0 {
					t.Fatalf("Run of a refused job = %+v, calls %d; want a refusal %s with a reason", r, len(got), tt.code)
				}
				return
			}
			if !r.OK || len(got) != 1 {
				t.Fatalf("Run = %+v, calls %d", r, len(got))
			}
			if _, ok := got[0].Args["source"]; ok {
				t.Errorf("the adapter was given the reserved source argument: %v", got[0].Args)
			}
		})
	}
}

func TestExecutor_Run(t *testing.T) {
	row := func(t *testing.T, e *worker.Executor) contract.WorkRow {
		return served(t, e, "acme.report@1", `{"month":"2026-11"}`, noTarget, nil)
	}
	int7, _ := contract.IntValue(7)
	tests := []struct {
		name    string
		adapter adapterFunc
		want    contract.ReportRequest
	}{
		{"ok", func(context.Context, worker.Call) (worker.Outcome, error) {
			return worker.OK(contract.Args{"n": int7})
		}, contract.ReportRequest{OK: true, Result: &contract.WorkResult{Rows: []contract.Args{{"n": int7}}}}},
		{"refused", func(context.Context, worker.Call) (worker.Outcome, error) {
			return worker.Refuse(contract.Errorf(contract.CodeRunRefused, "month is closed"))
		}, contract.ReportRequest{Code: contract.CodeRunRefused, Reason: "month is closed"}},
		{"refused with a secret in the cause", func(context.Context, worker.Call) (worker.Outcome, error) {
			return worker.Refuse(errors.New("dial postgres://app:hunter2@db"))
		}, contract.ReportRequest{Code: contract.CodeToolFailed, Reason: "the tool failed before it had any effect; the cause is in the worker's log."}},
		{"unknown", func(context.Context, worker.Call) (worker.Outcome, error) {
			return worker.Unknown(errors.New("connection reset"))
		}, contract.ReportRequest{EffectUnknown: true, Code: contract.CodeEffectUnknown,
			Reason: "the tool failed after its effect may have happened; a person must check the target and reconcile the operation."}},
		{"no status", func(context.Context, worker.Call) (worker.Outcome, error) {
			return worker.Outcome{}, nil
		}, contract.ReportRequest{EffectUnknown: true, Code: contract.CodeEffectUnknown,
			Reason: "the tool ended without saying what it did; a person must check the target."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newExecutor(t, tt.adapter)
			r := row(t, e)
			job, err := e.Prepare(r, "wkr-1", 2)
			if err != nil {
				t.Fatal(err)
			}
			got := e.Run(t.Context(), job)
			want := tt.want
			want.ID, want.WorkerID, want.Generation, want.Grant = "w-1", "wkr-1", 2, r.Grant
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b contract.Value) bool { return a == b })); diff != "" {
				t.Errorf("Run (-want +got):\n%s", diff)
			}
			if strings.Contains(got.Reason, "hunter2") {
				t.Errorf("report leaks a secret: %q", got.Reason)
			}
		})
	}
}

// TestWorkRow_closed shows that a served row with an extra field is refused by any
// decoder, strict or not.
func TestWorkRow_closed(t *testing.T) {
	tests := []struct {
		name string
		js   string
		code contract.Code
	}{
		{"ok", `{"id":"w","project":"p","invocation":"o","action":"a","args":{},"target":{},"toolSpec":{},"grant":"g"}`, ""},
		{"extra field", `{"id":"w","project":"p","invocation":"o","action":"a","args":{},"target":{},"toolSpec":{},"grant":"g","run":"rm -rf /"}`, contract.CodeWorkRow},
		{"no grant", `{"id":"w","project":"p","invocation":"o","action":"a","args":{},"target":{},"toolSpec":{}}`, contract.CodeWorkRow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a contract.WorkAnswer
			err := json.Unmarshal([]byte(`{"accepted":true,"work":[`+tt.js+`]}`), &a)
			if c := contract.CodeOf(err); c != tt.code {
				t.Fatalf("Unmarshal = %v, want %q", err, tt.code)
			}
		})
	}
}
