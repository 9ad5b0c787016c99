package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/contract"
)

// localRefPrefix marks the refs of a [MemoryArtifacts] sink. ReadArtifact calls naming
// one are answered by the loop, since the gateway never saw those artifacts.
const localRefPrefix = "local:"

// MemoryArtifacts is an [ArtifactSink] in the runtime's memory, for when the gateway
// offers none. Its artifacts last as long as the process. It is safe for concurrent use.
type MemoryArtifacts struct {
	mu    sync.Mutex
	items []Artifact
}

var _ ArtifactSink = (*MemoryArtifacts)(nil)

// PutArtifact keeps a and returns "local:<n>".
func (m *MemoryArtifacts) PutArtifact(_ context.Context, a Artifact) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.items = append(m.items, a)
	return fmt.Sprintf("%s%d", localRefPrefix, len(m.items)), nil
}

// readArtifactArgs are the ReadArtifact arguments the loop reads for a local ref.
type readArtifactArgs struct {
	Ref    string `json:"ref"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// localFragment is the result of ReadArtifact for a local ref: at most limit bytes of the
// artifact from Offset (as the gateway answers, never more than
// [contract.MaxArtifactFragment]), whether More follow, and its whole length. Its fields
// are in the order the model has always read them.
type localFragment struct {
	Content string `json:"content"`
	More    bool   `json:"more"`
	Offset  int    `json:"offset"`
	Ref     string `json:"ref"`
	Total   int    `json:"total"`
}

// read answers a ReadArtifact call for a local ref: the artifact from offset, as a JSON
// object like the gateway's answers. ok is false when args do not name a local ref.
func (m *MemoryArtifacts) read(args json.RawMessage) (text string, ok bool, err error) {
	var a readArtifactArgs
	if json.Unmarshal(args, &a) != nil || !strings.HasPrefix(a.Ref, localRefPrefix) {
		return "", false, nil
	}
	var n int
	if _, err := fmt.Sscanf(strings.TrimPrefix(a.Ref, localRefPrefix), "%d", &n); err != nil {
		n = 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if n < 1 || n > len(m.items) {
		return "", true, contract.Errorf(contract.CodeNotFound, "artifact %s is not kept by this runtime (local artifacts last as long as the process); query the Board again", a.Ref)
	}
	content := m.items[n-1].Content
	if a.Offset < 0 || a.Offset > len(content) {
		return "", true, contract.Errorf(contract.CodeInvalidArgument, "offset %d is outside artifact %s of %d bytes; pass 0 to %d", a.Offset, a.Ref, len(content), len(content))
	}
	if a.Limit < 0 {
		return "", true, contract.Errorf(contract.CodeInvalidArgument, "limit %d is negative; pass 1 to %d, or leave it out for %d", a.Limit, contract.MaxArtifactFragment, contract.MaxArtifactFragment)
	}
	limit := a.Limit
	if limit == 0 || limit > contract.MaxArtifactFragment {
		limit = contract.MaxArtifactFragment
	}
	end := min(a.Offset+limit, len(content))
	b, err := json.Marshal(localFragment{Content: string(content[a.Offset:end]), More: end < len(content), Offset: a.Offset, Ref: a.Ref, Total: len(content)})
	if err != nil {
		return "", true, fmt.Errorf("encode artifact %s: %w", a.Ref, err)
	}
	return toolResultText(contract.ToolResult{Accepted: true, Result: b}), true, nil
}
