package anthropic

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkReadStream parses a 500-delta answer: 300 text deltas and a tool call whose
// arguments arrive in 200 fragments, the shape of a long streamed turn.
func BenchmarkReadStream(b *testing.B) {
	var s strings.Builder
	ev := func(typ, data string) { fmt.Fprintf(&s, "event: %s\ndata: %s\n\n", typ, data) }
	ev("message_start", `{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i := range 300 {
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word%d "}}`, i))
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"ApplyBatch","input":{}}}`)
	ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"ops\":["}}`)
	for i := range 200 {
		sep := ","
		if i == 199 {
			sep = "]}"
		}
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"%d%s"}}`, i, sep))
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":600}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	stream := s.String()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		if _, err := readStream(strings.NewReader(stream), nil); err != nil {
			b.Fatal(err)
		}
	}
}
