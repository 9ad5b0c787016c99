package agent

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/contract"
)

// Output bounds.
const (
	DefaultOutputLimit = 16 << 10 // bytes of a tool result shown to the model
	MinOutputLimit     = 512      // below this the cut note would not fit beside any output
)

// Artifact is a tool result in full, kept where ReadArtifact can read it.
type Artifact struct {
	Tool    string // the tool that produced it, e.g. "QueryBoard"
	CallID  string // the model's id of the call
	Content []byte // the full result, exactly as the tool returned it
}

// ArtifactSink keeps full tool results and returns a reference the model can pass to
// ReadArtifact. The gateway implements it; PutArtifact returns a ref only once the
// artifact is durable, and an error otherwise.
type ArtifactSink interface {
	PutArtifact(ctx context.Context, a Artifact) (ref string, err error)
}

// Bounder cuts tool results to what the model is shown. A result within Limit is shown
// whole and not stored again: the transcript that holds it is already kept. A longer one
// is stored in full in Sink and shown cut at a UTF-8 boundary, ending with a note that
// says how much was cut and the ref to read the rest with. The zero Bounder has no sink
// and refuses to cut; set Sink before use. It is safe for concurrent use when Sink is.
type Bounder struct {
	Limit int          // bytes shown, the note included; 0: [DefaultOutputLimit]
	Sink  ArtifactSink // where full results go; required for results over Limit
}

// Bound returns what the model is shown of result. It fails only when a result must be
// cut and the sink cannot keep it: showing a cut result without a way to read the rest
// would hide output from the model silently.
func (b Bounder) Bound(ctx context.Context, tool, callID string, result []byte) (string, error) {
	limit := b.Limit
	if limit == 0 {
		limit = DefaultOutputLimit
	}
	if limit < MinOutputLimit {
		return "", contract.Errorf(contract.CodeInvalidArgument, "output limit %d is below %d bytes; raise it", limit, MinOutputLimit)
	}
	if len(result) <= limit {
		return string(result), nil
	}
	if b.Sink == nil {
		return "", contract.Errorf(contract.CodeInvalidArgument, "a %d-byte result of %s is over the %d-byte limit and no artifact sink is set; give the Bounder a Sink", len(result), tool, limit)
	}
	ref, err := b.Sink.PutArtifact(ctx, Artifact{Tool: tool, CallID: callID, Content: result})
	if err != nil {
		return "", fmt.Errorf("keep %d-byte result of %s call %s as artifact: %w", len(result), tool, callID, err)
	}
	// The note's figures are no longer than the total's, so a note built from the total
	// reserves enough room for the real one.
	reserve := len(cutNote(len(result), len(result), len(result), ref))
	shown := utf8Prefix(result, limit-reserve)
	note := cutNote(shown, len(result), len(result)-shown, ref)
	return string(result[:shown]) + note, nil
}

func cutNote(shown, total, cut int, ref string) string {
	return fmt.Sprintf("\n[docket: output cut: showing %d of %d bytes, %d cut. Read the rest with ReadArtifact {\"ref\": %q}]", shown, total, cut, ref)
}

// utf8Prefix is the length of the longest prefix of b no longer than n that does not end
// inside a UTF-8 sequence. Invalid bytes count as one-byte sequences.
func utf8Prefix(b []byte, n int) int {
	if n <= 0 {
		return 0
	}
	if n >= len(b) {
		return len(b)
	}
	// Step back over at most utf8.UTFMax-1 continuation bytes to the start of the rune
	// that straddles n, and keep it only if it fits whole.
	start := n
	for start > 0 && n-start < utf8.UTFMax-1 && !utf8.RuneStart(b[start]) {
		start--
	}
	if utf8.RuneStart(b[start]) {
		if _, size := utf8.DecodeRune(b[start:]); start+size <= n {
			return start + size
		}
		return start
	}
	return n
}
