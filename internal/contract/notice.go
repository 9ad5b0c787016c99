package contract

import "time"

// Notice kinds: what a member may subscribe to (docs/notices.md).
const (
	NoticeRequest    = "request"     // a Request waiting for a decision
	NoticeCard       = "card"        // a delegate's card to confirm
	NoticeOperation  = "operation"   // an Operation in needs_person
	NoticeBudget     = "budget"      // a budget warning
	NoticeTaskFailed = "task_failed" // a task reported failed
)

// NoticeKinds lists the notice kinds, in the order they are documented.
var NoticeKinds = []string{NoticeRequest, NoticeCard, NoticeOperation, NoticeBudget, NoticeTaskFailed}

// SubscribeNoticesRequest is a member's subscription to notices of a project: the kinds,
// and Webhook (an http or https URL) or Email (an address), exactly one of them; Digest,
// a Go duration such as "15m", batches the notices of each such window into one.
type SubscribeNoticesRequest struct {
	Kinds   []string `json:"kinds"`
	Webhook string   `json:"webhook,omitempty"`
	Email   string   `json:"email,omitempty"`
	Digest  string   `json:"digest,omitempty"`
}

// NoticeSubscription is a subscription as members see it. Destination is a webhook's
// scheme://host/… (its path and query may be a credential and are never shown) or the
// e-mail address. LastState is "", "delivered" or "failed", with LastError, the last
// failure's reason.
type NoticeSubscription struct {
	ID          string     `json:"id"`
	Project     ProjectID  `json:"project"`
	Member      MemberID   `json:"member"`
	Kinds       []string   `json:"kinds"`
	Channel     string     `json:"channel"` // "webhook" or "email"
	Destination string     `json:"destination"`
	Digest      string     `json:"digest,omitempty"`
	CreatedAt   time.Time  `json:"createdAt"`
	LastState   string     `json:"lastState,omitempty"`
	LastAt      *time.Time `json:"lastAt,omitempty"`
	LastError   string     `json:"lastError,omitempty"`
}

// NoticeTest is the answer to a test notice: its id, queued to be sent now.
type NoticeTest struct {
	Notice       string `json:"notice"`
	Subscription string `json:"subscription"`
}
