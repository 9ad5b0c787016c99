// Package opclass is the one table of every changing operation's class (issue 15): what a
// delegate runs itself (operational), what needs its member's consent, and what only a
// member acting itself may do (member only).
package opclass

import "slices"

// Class is what a delegate's call of an operation comes to.
type Class string

// The classes. A route the table does not list is member only, so a new route is closed
// to delegates until it is given a class here.
const (
	Operational Class = "operational" // runs as the delegate, through the same checks as its member
	Consent     Class = "consent"     // needs its member: refused to the delegate until cards (issue 15) record it
	MemberOnly  Class = "member-only" // refused to a delegate, by this gate and by the authority's own check
)

// Operation is one changing operation of /api/v1.
type Operation struct {
	Name    string // stable, for people: "agent.create"
	Route   string // the console's ServeMux pattern
	Class   Class
	Changes string // what it changes, in a few words
}

// Table is every changing /api/v1 route with its class, in the order docket operation
// list prints them. A console test checks that every changing route it serves is here.
var Table = []Operation{
	{"session.login", "POST /api/v1/sessions", MemberOnly, "opens a member's session with its passphrase"},
	{"session.login_cookie", "POST /api/v1/sessions/cookie", MemberOnly, "opens a member's browser session"},
	{"session.logout", "DELETE /api/v1/sessions/current", MemberOnly, "ends a session (the last one revokes the member's delegates)"},
	{"member.create", "POST /api/v1/members", MemberOnly, "adds a member to the caller's projects"},
	{"project.create", "POST /api/v1/projects", MemberOnly, "creates a project"},
	{"delegate.create", "POST /api/v1/projects/{project}/delegates", MemberOnly, "makes a delegate of the member"},
	{"delegate.revoke", "DELETE /api/v1/delegates/{delegate}", MemberOnly, "revokes one of the member's delegates"},
	{"policy.publish", "POST /api/v1/projects/{project}/policies", MemberOnly, "publishes a new version of a policy"},
	{"autonomy.set_level", "PUT /api/v1/projects/{project}/agents/{agent}/level", MemberOnly, "sets an Agent's autonomy level"},
	{"autonomy.open_window", "POST /api/v1/projects/{project}/agents/{agent}/windows", MemberOnly, "opens a run window of an Agent"},
	{"agent.create", "POST /api/v1/projects/{project}/agents", Consent, "creates an Agent and its token"},
	{"agent.token", "POST /api/v1/projects/{project}/agents/{agent}/token", Consent, "replaces an Agent's token"},
	{"agent.revoke", "DELETE /api/v1/projects/{project}/agents/{agent}", Consent, "revokes an Agent"},
	{"connection.create", "POST /api/v1/projects/{project}/connections", Consent, "creates a Connection and its key"},
	{"connection.revoke", "DELETE /api/v1/projects/{project}/connections/{connection}", Consent, "revokes a Connection"},
	{"source.bind", "PUT /api/v1/projects/{project}/connections/{connection}/sources/{source}", Consent, "binds a Source on a Connection"},
	{"tool.lock", "PUT /api/v1/projects/{project}/connections/{connection}/tools/{tool}", Consent, "locks a Tool on a Connection"},
	{"capability.install", "POST /api/v1/projects/{project}/capabilities", Consent, "installs a capability release, changing the Board"},
	{"request.decide", "POST /api/v1/projects/{project}/requests/{id}/decision", Consent, "approves or denies an Agent's Request"},
	{"checkpoint.sign", "POST /api/v1/projects/{project}/checkpoints", MemberOnly, "signs the project's head now and appends the checkpoint to its log"},
	{"operation.reconcile", "POST /api/v1/projects/{project}/operations/{op}/reconcile", Operational, "settles an Operation that needs a person with a known outcome"},
	{"operation.retry", "POST /api/v1/projects/{project}/operations/{op}/retry", Operational, "retries a failed Operation"},
	{"hook.call", "POST /api/v1/hook/calls", MemberOnly, "a coding agent's tool call, from its hook with the Agent's token: never a member's or a delegate's"},
	{"hook.outcome", "POST /api/v1/hook/outcomes", MemberOnly, "a coding agent's call outcome, from its hook with the Agent's token: never a member's or a delegate's"},
	{"schedule.create", "POST /api/v1/projects/{project}/schedules", Consent, "makes a schedule that posts tasks for an Agent as the member"},
	{"schedule.pause", "POST /api/v1/projects/{project}/schedules/{schedule}/pause", Operational, "pauses a schedule's fires"},
	{"schedule.resume", "POST /api/v1/projects/{project}/schedules/{schedule}/resume", Consent, "starts a paused schedule's fires again"},
	{"schedule.run_now", "POST /api/v1/projects/{project}/schedules/{schedule}/run", Consent, "fires a schedule now: a task for its Agent"},
	{"schedule.delete", "DELETE /api/v1/projects/{project}/schedules/{schedule}", Consent, "deletes a schedule"},
	{"conversation.save", "POST /api/v1/conversations/{conversation}/saves", MemberOnly, "an Agent's own conversation: never a member's or a delegate's"},
	{"conversation.budget_exhausted", "POST /api/v1/conversations/{conversation}/budget-exhausted", MemberOnly, "an Agent's own conversation: never a member's or a delegate's"},
	{"task.post", "POST /api/v1/projects/{project}/agents/{agent}/tasks", Operational, "posts a task for an Agent's runtime to take"},
	{"message.post", "POST /api/v1/projects/{project}/agents/{agent}/conversations/{conversation}/messages", Operational, "adds words to an Agent's conversation"},
	{"task.post_own", "POST /api/v1/tasks", MemberOnly, "an Agent's runtime posts a task for itself: never a member's or a delegate's"},
	{"task.claim", "POST /api/v1/tasks/claim", MemberOnly, "an Agent's runtime takes its next task: never a member's or a delegate's"},
	{"task.renew", "POST /api/v1/tasks/{task}/renew", MemberOnly, "an Agent's runtime keeps its claim: never a member's or a delegate's"},
	{"task.report", "POST /api/v1/tasks/{task}/report", MemberOnly, "an Agent's runtime reports its run: never a member's or a delegate's"},
	{"operation.wait", "POST /api/v1/operations/wait", MemberOnly, "an Agent's runtime waits for its outcomes (changes nothing): never a member's or a delegate's"},
}

// ForRoute returns the operation served at pattern; one the table lacks is member only.
func ForRoute(pattern string) Operation {
	if i := slices.IndexFunc(Table, func(o Operation) bool { return o.Route == pattern }); i >= 0 {
		return Table[i]
	}
	return Operation{Name: pattern, Route: pattern, Class: MemberOnly, Changes: "not classed: closed to delegates"}
}
