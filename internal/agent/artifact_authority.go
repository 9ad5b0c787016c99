package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/docketrun/docket/internal/contract"
)

// AuthorityArtifacts is an [ArtifactSink] backed by the authority (POST
// /api/v1/artifacts with the Agent's token): a tool result over the inline bound is kept
// as an artifact of the Agent, its bytes in the authority's store, so the model's
// ReadArtifact ref (art_…) reads it through the gateway after any restart of serve or of
// the runtime. Every artifact is scrubbed of Key. It is safe for concurrent use.
type AuthorityArtifacts struct {
	API API // the authority's /api/v1, called with the Agent's token; required
	Key Key // the model key, scrubbed from every artifact
}

var _ ArtifactSink = AuthorityArtifacts{}

// PutArtifact keeps a in the authority and returns its ref once it is durable.
func (s AuthorityArtifacts) PutArtifact(ctx context.Context, a Artifact) (string, error) {
	var ref contract.ArtifactRef
	in := contract.ArtifactPut{Tool: a.Tool, CallID: a.CallID, Content: s.Key.Scrub(string(a.Content))}
	if err := (&AuthorityConversations{API: s.API}).do(ctx, http.MethodPost, "/api/v1/artifacts", in, &ref); err != nil {
		return "", fmt.Errorf("keep the result of %s call %s: %w", a.Tool, a.CallID, err)
	}
	return ref.Ref, nil
}

var _ CompactionRecorder = (*AuthorityConversations)(nil)

// RecordCompaction records cp as a conversation.compacted event of conversation id: the
// replaced messages, scrubbed of Key, kept by the authority under their digest.
func (s *AuthorityConversations) RecordCompaction(ctx context.Context, id string, cp Compaction) error {
	in := contract.ConversationCompaction{Turns: cp.Turns, Summary: s.Key.Scrub(cp.Summary), Replaced: make([]json.RawMessage, 0, len(cp.Replaced))}
	for _, m := range cp.Replaced {
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("record the compaction of conversation %s: %w", id, err)
		}
		in.Replaced = append(in.Replaced, json.RawMessage(s.Key.Scrub(string(b))))
	}
	if err := s.do(ctx, http.MethodPost, "/api/v1/conversations/"+url.PathEscape(id)+"/compactions", in, nil); err != nil {
		return fmt.Errorf("record the compaction of conversation %s: %w", id, err)
	}
	return nil
}
