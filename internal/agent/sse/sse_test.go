package sse_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/agent/sse"
)

// readAll reads events until the first error.
func readAll(r io.Reader) ([]sse.Event, error) {
	rd := sse.NewReader(r)
	var evs []sse.Event
	for {
		ev, err := rd.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestReader_Next(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []sse.Event
	}{
		{"named events", "event: a\ndata: 1\n\nevent: b\ndata: 2\n\n", []sse.Event{{Name: "a", Data: "1"}, {Name: "b", Data: "2"}}},
		{"data only", "data: {\"x\":1}\n\ndata: [DONE]\n\n", []sse.Event{{Data: `{"x":1}`}, {Data: "[DONE]"}}},
		{"multi-line data", "data: a\ndata:b\ndata\n\n", []sse.Event{{Data: "a\nb\n"}}},
		{"CRLF", "event: a\r\ndata: 1\r\n\r\n", []sse.Event{{Name: "a", Data: "1"}}},
		{"comments, id, retry and extra blank lines", ": ping\n\n\nid: 7\nretry: 100\ndata: x\n\n", []sse.Event{{Data: "x"}}},
		{"one space removed, others kept", "data:   x \n\n", []sse.Event{{Data: "  x "}}},
		{"colon in value", "data: a: b\n\n", []sse.Event{{Data: "a: b"}}},
		{"last line without newline before a clean end", "data: x\n\n: bye", []sse.Event{{Data: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time, so every line crosses reads.
			got, err := readAll(iotest.OneByteReader(strings.NewReader(tt.in)))
			if err != io.EOF {
				t.Fatalf("read error = %v, want io.EOF", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReader_Next_malformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		in         string
		unexpected bool // also io.ErrUnexpectedEOF
	}{
		{"garbage line", "data: 1\n\ngarbage\n\n", false},
		{"unknown field", "data: 1\n\nfoo: bar\n\n", false},
		{"ends inside an event", "data: 1\n\nevent: a\ndata: {\"x\":", true},
		{"ends before the blank line", "data: 1\n", true},
		{"line too long", "data: " + strings.Repeat("x", sse.MaxEvent+1) + "\n\n", false},
		{"event too large", strings.Repeat("data: "+strings.Repeat("x", 1<<20)+"\n", 5) + "\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(strings.NewReader(tt.in))
			if !errors.Is(err, sse.ErrMalformed) || errors.Is(err, io.ErrUnexpectedEOF) != tt.unexpected {
				t.Errorf("read error = %v, want ErrMalformed (unexpected EOF: %v)", err, tt.unexpected)
			}
		})
	}
}

func TestReader_Next_readError(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	_, err := readAll(io.MultiReader(strings.NewReader("data: 1\n\ndata: 2"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Errorf("read error = %v, want the reader's error", err)
	}
}

// FuzzReader checks that any input ends in io.EOF, a malformed-stream error, or events
// within bounds, and never panics.
func FuzzReader(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/streams/*")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		evs, err := readAll(strings.NewReader(string(in)))
		if err != io.EOF && !errors.Is(err, sse.ErrMalformed) {
			t.Fatalf("read error = %v, want io.EOF or ErrMalformed", err)
		}
		total := 0
		for _, ev := range evs {
			if len(ev.Data) > sse.MaxEvent {
				t.Fatalf("event of %d bytes passed the bound", len(ev.Data))
			}
			total += len(ev.Data) + len(ev.Name)
		}
		if total > len(in) {
			t.Fatalf("events hold %d bytes from %d bytes of input", total, len(in))
		}
	})
}
