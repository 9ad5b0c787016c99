package openai

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/agent"
)

// FuzzReadStream checks that any stream yields either a *agent.ProviderError or a
// response whose tool calls have ids, names and object arguments, and that it never panics.
// It reaches the unexported parser directly, since going through HTTP would fuzz net/http.
func FuzzReadStream(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/streams/*")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, in string) {
		resp, err := readStream(strings.NewReader(in), func(agent.Delta) {})
		if err != nil {
			if _, ok := errors.AsType[*agent.ProviderError](err); !ok {
				t.Fatalf("readStream error %T %v is not a *agent.ProviderError", err, err)
			}
			return
		}
		for _, c := range resp.Message.Calls {
			if c.ID == "" || c.Name == "" || !agent.IsObject(c.Arguments) {
				t.Fatalf("readStream returned an unusable call %+v", c)
			}
		}
		if (len(resp.Message.Calls) > 0) != (resp.Stop == agent.StopToolUse) {
			t.Fatalf("stop %s with %d calls", resp.Stop, len(resp.Message.Calls))
		}
	})
}
