package contract

import (
	"encoding/json"
	"time"
)

// Bounds of a conversation's compaction record (POST
// /api/v1/conversations/{conversation}/compactions).
const (
	MaxCompactedBytes = 8 << 20  // bytes of the replaced messages' JSON array
	MaxSummaryBytes   = 64 << 10 // bytes of the summary that replaced them
)

// ConversationCompaction is what an Agent's runtime records when it replaces the older
// turns of one of its conversations by a summary the model wrote (docs/workbench.md,
// "Long conversations"): the replaced messages, whole, and the summary.
type ConversationCompaction struct {
	Replaced []json.RawMessage `json:"replaced"`
	Turns    int               `json:"turns"` // model turns among them, earlier summaries' included
	Summary  string            `json:"summary"`
}

// Compacted is the record of one compaction of a conversation: the replaced messages by
// digest (the SHA-256 of their JSON array), how many, and the summary.
type Compacted struct {
	Seq      int64     `json:"seq"` // its event
	At       time.Time `json:"at"`
	Digest   Digest    `json:"digest"`
	Messages int       `json:"messages"`
	Turns    int       `json:"turns"`
	Size     int64     `json:"size"`
	Summary  string    `json:"summary"`
}
