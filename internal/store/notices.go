package store

import "time"

// NoticeSubscription is a member's subscription to notices of a project: the Kinds it
// wants ("request", "card", "operation", "budget", "task_failed"), sent by Channel
// ("webhook" or "email") to Target. Target may itself be a credential (a chat webhook's
// URL): it is kept only in this row, never in an event, a log line or an error. Digest,
// when above zero, batches the notices of each Digest-long window into one message.
// LastState ("", "delivered" or "failed"), LastAt and LastError are its last delivery.
type NoticeSubscription struct {
	ID        string
	Project   string
	Member    string
	Kinds     []string
	Channel   string
	Target    string
	Digest    time.Duration
	CreatedAt time.Time
	DeletedAt *time.Time
	LastState string
	LastAt    *time.Time
	LastError string
}

// Notice is one notice of a subscription, an outbox row: Body is the message as JSON
// (the store does not read it). A sender claims due pending notices with
// [Tx.ClaimNotices], which writes ClaimedBy and ClaimUntil, so two senders sharing a
// store never both send one; [Tx.SettleNotice] then records its outcome.
type Notice struct {
	ID           string
	Subscription string
	Project      string
	Kind         string
	Subject      string
	Body         []byte
	CreatedAt    time.Time
	DueAt        time.Time // when it may next be sent
	Attempts     int
	State        string // "pending", "delivered" or "failed"
	ClaimedBy    string
	ClaimUntil   time.Time
	SettledAt    *time.Time
	LastError    string
}
