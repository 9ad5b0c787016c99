package conversation

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// RecordCompaction records that the runtime of the calling Agent replaced older turns of
// its conversation id by a summary (docs/workbench.md, "Long conversations"): the
// replaced messages are kept as a blob named by the SHA-256 of their JSON array, and a
// conversation.compacted event names that digest, so a member can read what the summary
// replaced. It returns the record.
func (a *Keeper) RecordCompaction(ctx context.Context, c identity.Caller, id contract.ConversationID, cp contract.ConversationCompaction) (contract.Compacted, error) {
	project, err := agentOnly(c)
	if err != nil {
		return contract.Compacted{}, err
	}
	if _, err := contract.ParseConversationID(string(id)); err != nil {
		return contract.Compacted{}, err
	}
	if len(cp.Replaced) == 0 || cp.Turns < 0 {
		return contract.Compacted{}, contract.Errorf(contract.CodeInvalidArgument, "a compaction names the messages it replaced (at least one) and a non-negative count of turns; send them")
	}
	for i, m := range cp.Replaced {
		if !isObject(m) {
			return contract.Compacted{}, contract.Errorf(contract.CodeInvalidArgument, "replaced message %d is not a JSON object; send each message as the runtime saved it", i)
		}
	}
	if len(cp.Summary) > contract.MaxSummaryBytes {
		return contract.Compacted{}, contract.Errorf(contract.CodeConversationTooLarge, "the summary is %d bytes, over the bound of %d; keep it shorter", len(cp.Summary), contract.MaxSummaryBytes)
	}
	body, err := json.Marshal(cp.Replaced)
	if err != nil {
		return contract.Compacted{}, fmt.Errorf("record compaction of %s: %w", id, err)
	}
	if len(body) > contract.MaxCompactedBytes {
		return contract.Compacted{}, contract.Errorf(contract.CodeConversationTooLarge, "the replaced messages are %d bytes, over the bound of %d; compact fewer at a time", len(body), contract.MaxCompactedBytes)
	}
	digest := contract.Sum(body)
	data := event.ConversationCompactedData{Conversation: id, Digest: hex.EncodeToString(digest[:]), Messages: len(cp.Replaced),
		Turns: cp.Turns, Size: int64(len(body)), Summary: cp.Summary}
	var rec contract.Compacted
	// Appended without the index's write sequence, as a budget's exhaustion is
	// (RecordBudgetExhausted): the compaction records what the runtime did, which no rule
	// of the index decides on, and the index applies it at its next catch-up, from memory
	// (docs/architecture.md, "The project state and its driver").
	err = a.store.Update(ctx, func(tx store.Tx) error {
		h, err := tx.PutBlob(ctx, body)
		if err != nil {
			return err
		}
		if h != store.Hash(digest) {
			return fmt.Errorf("the store named the blob %s, not its sha256 %s", h, data.Digest)
		}
		now := a.nowUTC()
		ne, err := eventlog.New(project, "", c.Principal(), now, data)
		if err != nil {
			return err
		}
		ev, err := tx.Append(ctx, ne)
		if err != nil {
			return fmt.Errorf("append compaction: %w", err)
		}
		rec = contract.Compacted{Seq: ev.Seq, At: now, Digest: digest, Messages: data.Messages, Turns: data.Turns, Size: data.Size, Summary: data.Summary}
		return nil
	})
	if err != nil {
		return contract.Compacted{}, fmt.Errorf("record compaction of conversation %s: %w", id, eventlog.Refuse(err, "conversation "+string(id)))
	}
	return rec, nil
}

// CompactedMessages returns the messages a compaction of conversation id of agent (an id
// or a name) in project replaced, for a member of project: the blob its event names by
// digest. A digest no compaction of the conversation names is [contract.CodeNotFound].
func (a *Keeper) CompactedMessages(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, id contract.ConversationID, digest contract.Digest) ([]json.RawMessage, error) {
	conv, err := a.Conversation(ctx, c, project, agent, id)
	if err != nil {
		return nil, err
	}
	for _, cp := range conv.Compactions {
		if cp.Digest != digest {
			continue
		}
		b, err := a.store.Blob(ctx, store.Hash(digest))
		if err != nil {
			return nil, fmt.Errorf("read the messages compaction %s replaced: %w", digest, err)
		}
		var msgs []json.RawMessage
		if err := json.Unmarshal(b, &msgs); err != nil {
			return nil, fmt.Errorf("decode the messages compaction %s replaced: %w", digest, err)
		}
		return msgs, nil
	}
	return nil, contract.Errorf(contract.CodeNotFound, "conversation %s has no compaction %s; its compactions are listed with the conversation", id, digest)
}

// compactedOf is the record of a conversation.compacted event.
func compactedOf(e store.Event) (contract.Compacted, contract.ConversationID, error) {
	var d event.ConversationCompactedData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return contract.Compacted{}, "", fmt.Errorf("decode event %d: %w", e.Seq, err)
	}
	var digest contract.Digest
	b, err := hex.DecodeString(d.Digest)
	if err != nil || len(b) != len(digest) {
		return contract.Compacted{}, "", fmt.Errorf("event %d names digest %q, not a hex sha256", e.Seq, d.Digest)
	}
	copy(digest[:], b)
	return contract.Compacted{Seq: e.Seq, At: e.At, Digest: digest, Messages: d.Messages, Turns: d.Turns, Size: d.Size, Summary: d.Summary}, d.Conversation, nil
}
