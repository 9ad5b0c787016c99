package openai

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkReadStream parses a 500-chunk answer: 300 text deltas and a tool call whose
// arguments arrive in 200 fragments, the shape of a long streamed turn.
func BenchmarkReadStream(b *testing.B) {
	var s strings.Builder
	for i := range 300 {
		fmt.Fprintf(&s, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word%d \"}}]}\n\n", i)
	}
	fmt.Fprintf(&s, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"ApplyBatch\",\"arguments\":\"{\\\"ops\\\":[\"}}]}}]}\n\n")
	for i := range 200 {
		sep := ","
		if i == 199 {
			sep = "]}"
		}
		fmt.Fprintf(&s, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"%d%s\"}}]}}]}\n\n", i, sep)
	}
	s.WriteString("data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n")
	stream := s.String()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		if _, err := readStream(strings.NewReader(stream), nil); err != nil {
			b.Fatal(err)
		}
	}
}
