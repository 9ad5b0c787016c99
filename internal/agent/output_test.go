package agent_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/contract"
)

// sinkFunc is an ArtifactSink from a function.
type sinkFunc func(ctx context.Context, a agent.Artifact) (string, error)

func (f sinkFunc) PutArtifact(ctx context.Context, a agent.Artifact) (string, error) {
	return f(ctx, a)
}

// recorder keeps what it was handed.
type recorder struct{ got []agent.Artifact }

func (r *recorder) PutArtifact(_ context.Context, a agent.Artifact) (string, error) {
	r.got = append(r.got, a)
	return "art-1", nil
}

func TestBounder_Bound(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		result string
		kept   bool   // handed to the sink
		prefix string // what the shown text starts with
	}{
		{"within the limit", 600, strings.Repeat("a", 600), false, strings.Repeat("a", 600)},
		{"ascii over the limit", 600, strings.Repeat("a", 5000), true, strings.Repeat("a", 400)},
		{"multibyte runes at the cut", 600, strings.Repeat("€", 2000), true, strings.Repeat("€", 100)},
		{"four-byte runes at the cut", 700, strings.Repeat("𝄞", 1000), true, strings.Repeat("𝄞", 100)},
		{"invalid bytes", 600, strings.Repeat("\xff\xfe", 1000), true, "\xff\xfe"},
		{"default limit", 0, strings.Repeat("x", agent.DefaultOutputLimit+1), true, strings.Repeat("x", 15000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			b := agent.Bounder{Limit: tt.limit, Sink: rec}
			got, err := b.Bound(t.Context(), "QueryBoard", "call-1", []byte(tt.result))
			if err != nil {
				t.Fatal(err)
			}
			limit := tt.limit
			if limit == 0 {
				limit = agent.DefaultOutputLimit
			}
			if len(got) > limit {
				t.Errorf("shown %d bytes, over the %d limit", len(got), limit)
			}
			if !strings.HasPrefix(got, tt.prefix) {
				t.Errorf("shown text does not start with the result: %.40q", got)
			}
			if !tt.kept {
				if got != tt.result || len(rec.got) != 0 {
					t.Errorf("a result within the limit was changed or stored")
				}
				return
			}
			want := []agent.Artifact{{Tool: "QueryBoard", CallID: "call-1", Content: []byte(tt.result)}}
			if diff := cmp.Diff(want, rec.got); diff != "" {
				t.Errorf("artifact (-want +got):\n%s", diff)
			}
			body, note, ok := strings.Cut(got, "\n[docket: output cut: ")
			if !ok || !strings.HasSuffix(note, `Read the rest with ReadArtifact {"ref": "art-1"}]`) {
				t.Fatalf("no cut note naming the artifact: %q", got[max(0, len(got)-200):])
			}
			if !strings.HasPrefix(tt.result, body) {
				t.Errorf("shown text is not a prefix of the result")
			}
			if utf8.ValidString(tt.result) && !utf8.ValidString(body) {
				t.Errorf("the cut split a UTF-8 sequence")
			}
			wantNote := "showing " + strconv.Itoa(len(body)) + " of " + strconv.Itoa(len(tt.result)) + " bytes, " + strconv.Itoa(len(tt.result)-len(body)) + " cut."
			if !strings.HasPrefix(note, wantNote) {
				t.Errorf("note = %q, want it to start %q", note, wantNote)
			}
		})
	}
}

func TestBounder_Bound_refuses(t *testing.T) {
	big := []byte(strings.Repeat("a", 2000))
	sinkErr := errors.New("disk full")
	tests := []struct {
		name string
		b    agent.Bounder
		is   error
		code contract.Code
	}{
		{"no sink", agent.Bounder{Limit: 1000}, nil, contract.CodeInvalidArgument},
		{"limit too small", agent.Bounder{Limit: 10, Sink: &recorder{}}, nil, contract.CodeInvalidArgument},
		{"sink fails", agent.Bounder{Limit: 1000, Sink: sinkFunc(func(context.Context, agent.Artifact) (string, error) { return "", sinkErr })}, sinkErr, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.b.Bound(t.Context(), "QueryBoard", "c", big)
			if err == nil || contract.CodeOf(err) != tt.code || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Errorf("Bound error = %v, want code %q wrapping %v", err, tt.code, tt.is)
			}
		})
	}
}

// TestBounder_Bound_property: whatever the result and limit, what is shown fits the limit,
// begins with a prefix of the result, keeps valid UTF-8 valid, and names the artifact
// exactly when something was cut.
func TestBounder_Bound_property(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.IntRange(agent.MinOutputLimit, 4096).Draw(t, "limit")
		result := rapid.OneOf(
			rapid.StringN(0, 9000, -1),
			rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 9000), func(b []byte) string { return string(b) }),
		).Draw(t, "result")
		rec := &recorder{}
		got, err := agent.Bounder{Limit: limit, Sink: rec}.Bound(context.Background(), "QueryBoard", "c", []byte(result))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > limit {
			t.Fatalf("shown %d bytes over the %d limit", len(got), limit)
		}
		body, _, cut := strings.Cut(got, "\n[docket: output cut: ")
		if cut != (len(result) > limit) || cut != (len(rec.got) == 1) {
			t.Fatalf("cut = %v, stored %d, for %d bytes at limit %d", cut, len(rec.got), len(result), limit)
		}
		if !strings.HasPrefix(result, body) || (utf8.ValidString(result) && !utf8.ValidString(body)) {
			t.Fatalf("shown text is not a clean prefix of the result")
		}
	})
}
