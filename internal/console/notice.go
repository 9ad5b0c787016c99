package console

import (
	"net/http"
	"net/url"

	"github.com/docketrun/docket/internal/contract"
)

// notice names a message a page shows once a form it sent was done. The redirect after
// the form carries only the name (?notice=agent_revoked), and a page shows the message of
// a name in [notices] and nothing for any other: a link someone else made can never put
// words of its own on a Docket page (docs/security.md, "Redirects"). What the form
// changed is on the page itself, so a message names no record.
type notice string

// The notices, one per outcome of a page's form.
const (
	noticeAgentRevoked     notice = "agent_revoked"
	noticeCardDeclined     notice = "card_declined"
	noticeDelegateRevoked  notice = "delegate_revoked"
	noticeRequestApproved  notice = "request_approved"
	noticeRequestDenied    notice = "request_denied"
	noticeRequestDecided   notice = "request_decided"
	noticeReconciledDone   notice = "operation_done"
	noticeReconciledFailed notice = "operation_failed"
	noticePolicyPublished  notice = "policy_published"
	noticeLevelManual      notice = "level_manual"
	noticeLevelAttended    notice = "level_attended"
	noticeLevelUnattended  notice = "level_unattended"
	noticeWindowOpened     notice = "run_window_opened"
	noticeRuntimeStarts    notice = "runtime_starts"
	noticeModelSet         notice = "model_set"
	noticeRuntimeStops     notice = "runtime_stops"
	noticeScheduleMade     notice = "schedule_made"
	noticeSchedulePaused   notice = "schedule_paused"
	noticeScheduleResumed  notice = "schedule_resumed"
	noticeScheduleFired    notice = "schedule_fired"
	noticeScheduleRefused  notice = "schedule_refused"
	noticeScheduleDeleted  notice = "schedule_deleted"
	noticeSubscribed       notice = "notices_subscribed"
	noticeUnsubscribed     notice = "notices_unsubscribed"
	noticeTestQueued       notice = "notices_test_queued"
	noticeTaskPosted       notice = "task_posted"
	noticeMessagePosted    notice = "message_posted"
	noticeCasePaused       notice = "case_paused"
	noticeCaseResumed      notice = "case_resumed"
	noticeTaskCancelled    notice = "task_cancelled"
	noticeTaskCancelAsked  notice = "task_cancel_asked"
	noticeTaskEnded        notice = "task_ended"
	noticeBudgetSet        notice = "budget_set"
	noticeBudgetReset      notice = "budget_reset"
	noticeBudgetRemoved    notice = "budget_removed"

	noticeProfileFromBlueprint notice = "profile_from_blueprint"

	noticeCapabilityInstalled notice = "capability_installed"
	noticeToolLocked          notice = "tool_locked"
	noticeToolUnlocked        notice = "tool_unlocked"
	noticeToolApproval        notice = "tool_approval"
	noticeSourceBound         notice = "source_bound"
	noticeToolsAdded          notice = "tools_added"
	noticeMaterialsAdded      notice = "materials_added" // by docket start's Add files (docs/materials.md)
)

// notices is every message a page shows after a form, by its name: a fixed set.
var notices = map[notice]string{
	noticeAgentRevoked:     "Agent revoked; its token no longer works.",
	noticeCardDeclined:     "Card declined; its call did not run.",
	noticeDelegateRevoked:  "Delegate revoked; its credential no longer works and its open cards are void.",
	noticeRequestApproved:  "Request approved.",
	noticeRequestDenied:    "Request denied.",
	noticeRequestDecided:   "Request decided.",
	noticeReconciledDone:   "Operation reconciled: it is done, as you found.",
	noticeReconciledFailed: "Operation reconciled: it failed, as you found.",
	noticePolicyPublished:  "Published a new policy version; it is in force.",
	noticeLevelManual:      "The Agent is now manual: every write needs a person.",
	noticeLevelAttended:    "The Agent is now attended: it writes only inside a run window a member opened.",
	noticeLevelUnattended:  "The Agent is now unattended: it writes any time.",
	noticeWindowOpened:     "Opened a run window for the Agent.",
	noticeRuntimeStarts:    "The Agent's runtime starts: docket start follows its profile within seconds.",
	noticeModelSet:         "Model settings saved in its profile: docket start restarts its runtime with them within seconds.",
	noticeRuntimeStops:     "The Agent's runtime stops: docket start follows its profile within seconds.",
	noticeScheduleMade:     "Schedule made.",
	noticeSchedulePaused:   "Schedule paused.",
	noticeScheduleResumed:  "Schedule resumed.",
	noticeScheduleFired:    "Schedule fired: its task is posted.",
	noticeScheduleRefused:  "Schedule fired; its task was refused: its last fire below says why.",
	noticeScheduleDeleted:  "Schedule deleted.",
	noticeSubscribed:       "Subscribed: notices will come where you asked.",
	noticeUnsubscribed:     "Unsubscribed: no more notices go there.",
	noticeTestQueued:       "A test notice is on its way; its delivery shows below.",
	noticeTaskPosted:       "Task posted; the Agent's runtime takes it.",
	noticeMessagePosted:    "Message posted; the Agent's runtime takes it.",
	noticeCasePaused:       "Case paused: its Actions and writes are refused until every hold is released.",
	noticeCaseResumed:      "Hold released. The Case runs again once no hold is left.",
	noticeTaskCancelled:    "Task cancelled; nothing of it ran.",
	noticeTaskCancelAsked:  "Cancel sent: the runtime sends no further model request or tool call, and the task ends once the Operations it admitted have an outcome.",
	noticeTaskEnded:        "The task had already ended; nothing was cancelled.",
	noticeBudgetSet:        "Budget set; a task that waited on it goes on once it has room.",
	noticeBudgetReset:      "Budget reset: its window starts again from nothing; a task that waited on it goes on.",
	noticeBudgetRemoved:    "Budget removed, with what it spent: its requests no longer count against it, and a task that waited on it goes on.",

	noticeCapabilityInstalled:  "Capability installed; its release is listed below with its Actions.",
	noticeToolLocked:           "Tool locked at the digest shown; the worker runs it, and a Tool that states its parameters is offered as a direct Action.",
	noticeToolUnlocked:         "Tool unlocked: its direct Action is gone and a request waiting for it is void.",
	noticeToolApproval:         "Approval changed; a request waiting under the old one is void.",
	noticeSourceBound:          "Source bound.",
	noticeToolsAdded:           "Tools added to the worker's manifest; lock each below to let it run.",
	noticeMaterialsAdded:       "Files added: their bytes stay on this machine; the Agent reads them through its material read Action.",
	noticeProfileFromBlueprint: "Profile set from the blueprint: a copy, which a later change of the blueprint leaves as it is.",
}

// levelNotices is the notice of each autonomy level an Agent is set to (docs/policies.md).
var levelNotices = map[string]notice{"manual": noticeLevelManual, "attended": noticeLevelAttended, "unattended": noticeLevelUnattended}

// reconciledNotices is the notice of each state a member reconciles an Operation to.
var reconciledNotices = map[contract.OperationState]notice{contract.OpDone: noticeReconciledDone, contract.OpFailed: noticeReconciledFailed}

// noticeOf returns the message of the notice r's link names, or "" when it names none
// of [notices].
func noticeOf(r *http.Request) string {
	return notices[notice(r.URL.Query().Get("notice"))]
}

// withNotice returns the query q with notice n in it, encoded.
func withNotice(q url.Values, n notice) string {
	if q == nil {
		q = url.Values{}
	}
	q.Set("notice", string(n))
	return q.Encode()
}

// redirectNotice answers a page form with a redirect to to, carrying notice n for the
// page there to show, so that reloading it does not send the form again.
func redirectNotice(w http.ResponseWriter, r *http.Request, to string, n notice) error {
	http.Redirect(w, r, to+"?"+withNotice(nil, n), http.StatusSeeOther)
	return nil
}
