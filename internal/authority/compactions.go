package authority

import (
	"context"
	"encoding/json"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// RecordCompaction records that the calling Agent's runtime replaced older turns of its
// conversation id by a summary; see [conversation.Keeper.RecordCompaction].
func (a *Authority) RecordCompaction(ctx context.Context, c identity.Caller, id contract.ConversationID, cp contract.ConversationCompaction) (contract.Compacted, error) {
	return a.conversations.RecordCompaction(ctx, c, id, cp)
}

// CompactedMessages returns the messages a compaction of conversation id of agent
// replaced, for a member of project; see [conversation.Keeper.CompactedMessages].
func (a *Authority) CompactedMessages(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, id contract.ConversationID, digest contract.Digest) ([]json.RawMessage, error) {
	return a.conversations.CompactedMessages(ctx, c, project, agent, id, digest)
}
