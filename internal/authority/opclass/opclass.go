// Package opclass is the one table of every changing operation's class: what a
// delegate runs itself (operational), what needs its member's consent, and what only a
// member acting itself may do (member only).
package opclass

import (
	"net/url"
	"slices"
	"strings"
)

// Class is what a delegate's call of an operation comes to.
type Class string

// The classes. A route the table does not list is member only, so a new route is closed
// to delegates until it is given a class here.
const (
	Operational Class = "operational" // runs as the delegate, through the same checks as its member
	Consent     Class = "consent"     // records a card its member confirms; runs nothing until then
	MemberOnly  Class = "member-only" // refused to a delegate, by this gate and by the authority's own check
)

// Operation is one changing operation of /api/v1.
type Operation struct {
	Name    string // stable, for people: "agent.create"
	Route   string // the console's ServeMux pattern
	Class   Class
	Changes string // what it changes, in a few words
}

// Subject is what a card is bound to: the kind of record and where the call
// names it, each reference a path wildcard ("{agent}") or a top-level string field of
// the body ("body.name"). The authority reads the record's version from these once, when
// the card is recorded, and again when a member confirms it; a version that moved voids
// the card.
type Subject struct {
	Kind string
	Refs []string
}

// Subject kinds: the authority reads each kind's version in one place.
const (
	SubjectAgent      = "agent"      // the Agent named: its record and token generation, or absent
	SubjectConnection = "connection" // the Connection named: its record, or absent
	SubjectSource     = "source"     // the Source on a Connection: its record's digest, or absent
	SubjectTool       = "tool"       // the tool lock on a Connection: its digest, or absent
	SubjectCapability = "capability" // the capability the uploaded package declares: its installed release digest, or absent
	SubjectRequest    = "request"    // the Request: its state and digest
	SubjectSchedule   = "schedule"   // the schedule: its record (Agent, timing, task, paused, deleted), or absent
	SubjectBudget     = "budget"     // the budget of the project by name: its version, or absent
)

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
	{"profile.set", "PUT /api/v1/projects/{project}/agents/{agent}/profile", MemberOnly, "sets an Agent's profile: its model, budgets, instructions, and whether docket start runs it"},
	{"profile.from_blueprint", "POST /api/v1/projects/{project}/agents/{agent}/profile/from-blueprint", MemberOnly, "sets an Agent's profile to a copy of a blueprint, with the Agent's key file"},
	{"blueprint.define", "PUT /api/v1/projects/{project}/blueprints/{blueprint}", MemberOnly, "sets a blueprint of Agent profiles: model, instructions, and the Case Types and Actions its Agents may use"},
	{"blueprint.remove", "DELETE /api/v1/projects/{project}/blueprints/{blueprint}", MemberOnly, "removes a blueprint; profiles made from it keep their copy"},
	{"runtime.report", "PUT /api/v1/projects/{project}/agents/{agent}/runtime", MemberOnly, "records the state docket start reports of an Agent's runtime"},
	{"material.add", "POST /api/v1/projects/{project}/agents/{agent}/materials", MemberOnly, "records a file's name, size, media type and sha256 for an Agent; its bytes stay on the machine docket start runs on"},
	{"material.disclose", "PUT /api/v1/projects/{project}/agents/{agent}/materials/{sha256}/disclosure", MemberOnly, "allows or forbids sending a material's content to an Agent's model provider"},
	{"worker.report", "PUT /api/v1/projects/{project}/connections/{connection}/worker", MemberOnly, "records the state docket start reports of the worker it runs for a Connection"},
	{"agent.create", "POST /api/v1/projects/{project}/agents", Consent, "creates an Agent and its token"},
	{"agent.token", "POST /api/v1/projects/{project}/agents/{agent}/token", Consent, "replaces an Agent's token"},
	{"agent.revoke", "DELETE /api/v1/projects/{project}/agents/{agent}", Consent, "revokes an Agent"},
	{"connection.create", "POST /api/v1/projects/{project}/connections", Consent, "creates a Connection and its key"},
	{"connection.revoke", "DELETE /api/v1/projects/{project}/connections/{connection}", Consent, "revokes a Connection"},
	{"source.bind", "PUT /api/v1/projects/{project}/connections/{connection}/sources/{source}", Consent, "binds a Source on a Connection"},
	{"tool.lock", "PUT /api/v1/projects/{project}/connections/{connection}/tools/{tool}", Consent, "locks a Tool on a Connection"},
	{"tool.unlock", "DELETE /api/v1/projects/{project}/connections/{connection}/tools/{tool}", Consent, "takes a Tool's lock off a Connection, voiding the pending requests naming it"},
	{"tool.approval", "PUT /api/v1/projects/{project}/connections/{connection}/tools/{tool}/approval", Consent, "sets what a locked Tool's direct Action needs: none, a person or a delegation class"},
	{"capability.install", "POST /api/v1/projects/{project}/capabilities", Consent, "installs a capability release, changing the Board"},
	{"request.decide", "POST /api/v1/projects/{project}/requests/{id}/decision", Consent, "approves or denies an Agent's Request; a delegate decides one the delegation policy covers itself (operational), a card records the rest"},
	{"card.confirm", "POST /api/v1/cards/{card}/confirm", MemberOnly, "runs a delegate's card as the confirming member"},
	{"card.decline", "POST /api/v1/cards/{card}/decline", MemberOnly, "closes a delegate's card without running it"},
	{"checkpoint.sign", "POST /api/v1/projects/{project}/checkpoints", MemberOnly, "signs the project's head now and appends the checkpoint to its log"},
	{"operation.reconcile", "POST /api/v1/projects/{project}/operations/{op}/reconcile", Operational, "settles an Operation that needs a person with a known outcome"},
	{"operation.retry", "POST /api/v1/projects/{project}/operations/{op}/retry", Operational, "retries a failed Operation"},
	{"hook.call", "POST /api/v1/hook/calls", MemberOnly, "a coding agent's tool call, from its hook with the Agent's token: never a member's or a delegate's"},
	{"hook.outcome", "POST /api/v1/hook/outcomes", MemberOnly, "a coding agent's call outcome, from its hook with the Agent's token: never a member's or a delegate's"},
	{"schedule.create", "POST /api/v1/projects/{project}/schedules", Consent, "makes a schedule that posts tasks for an Agent as the member"},
	{"case.pause", "POST /api/v1/projects/{project}/cases/{case}/pause", Operational, "pauses a Case with a member's hold"},
	{"case.resume", "POST /api/v1/projects/{project}/cases/{case}/resume", Operational, "releases a member's hold on a Case"},
	{"schedule.pause", "POST /api/v1/projects/{project}/schedules/{schedule}/pause", Operational, "pauses a schedule's fires"},
	{"schedule.resume", "POST /api/v1/projects/{project}/schedules/{schedule}/resume", Consent, "starts a paused schedule's fires again"},
	{"schedule.run_now", "POST /api/v1/projects/{project}/schedules/{schedule}/run", Consent, "fires a schedule now: a task for its Agent"},
	{"schedule.delete", "DELETE /api/v1/projects/{project}/schedules/{schedule}", Consent, "deletes a schedule"},
	{"notice.subscribe", "POST /api/v1/projects/{project}/notices", MemberOnly, "subscribes the member to notices sent to a webhook or an address"},
	{"notice.unsubscribe", "DELETE /api/v1/projects/{project}/notices/{subscription}", MemberOnly, "stops one of the member's notice subscriptions"},
	{"notice.test", "POST /api/v1/projects/{project}/notices/{subscription}/test", MemberOnly, "sends a test notice on one of the member's subscriptions"},
	{"conversation.save", "POST /api/v1/conversations/{conversation}/saves", MemberOnly, "an Agent's own conversation: never a member's or a delegate's"},
	{"conversation.compaction", "POST /api/v1/conversations/{conversation}/compactions", MemberOnly, "an Agent's own conversation: never a member's or a delegate's"},
	{"artifact.put", "POST /api/v1/artifacts", MemberOnly, "an Agent keeps its own tool results: never a member's or a delegate's"},
	{"conversation.budget_exhausted", "POST /api/v1/conversations/{conversation}/budget-exhausted", MemberOnly, "an Agent's own conversation: never a member's or a delegate's"},
	{"task.post", "POST /api/v1/projects/{project}/agents/{agent}/tasks", Operational, "posts a task for an Agent's runtime to take"},
	{"task.cancel", "POST /api/v1/projects/{project}/tasks/{task}/cancel", Operational, "cancels a task: its runtime sends no further model request or tool call"},
	{"message.post", "POST /api/v1/projects/{project}/agents/{agent}/conversations/{conversation}/messages", Operational, "adds words to an Agent's conversation"},
	{"task.post_own", "POST /api/v1/tasks", MemberOnly, "an Agent's runtime posts a task for itself: never a member's or a delegate's"},
	{"task.claim", "POST /api/v1/tasks/claim", MemberOnly, "an Agent's runtime takes its next task: never a member's or a delegate's"},
	{"task.renew", "POST /api/v1/tasks/{task}/renew", MemberOnly, "an Agent's runtime keeps its claim: never a member's or a delegate's"},
	{"task.report", "POST /api/v1/tasks/{task}/report", MemberOnly, "an Agent's runtime reports its run: never a member's or a delegate's"},
	{"operation.wait", "POST /api/v1/operations/wait", MemberOnly, "an Agent's runtime waits for its outcomes (changes nothing): never a member's or a delegate's"},
	{"budget.set", "PUT /api/v1/projects/{project}/budgets/{budget}", Consent, "sets a budget's limits on model requests (a raise, a lowering) or resets its window"},
	{"budget.remove", "DELETE /api/v1/projects/{project}/budgets/{budget}", Consent, "removes a budget, with what its windows spent: its requests no longer count against it"},
	{"budget.reserve", "POST /api/v1/budgets/reserve", MemberOnly, "an Agent's runtime holds budget for a model request: never a member's or a delegate's"},
	{"budget.charge", "POST /api/v1/budgets/charge", MemberOnly, "an Agent's runtime charges a model request's usage: never a member's or a delegate's"},
}

// Subjects binds each consent operation, by name, to what a card of it is bound to. A
// test checks that every consent operation has one.
var Subjects = map[string]Subject{
	"agent.create":       {SubjectAgent, []string{"body.name"}},
	"agent.token":        {SubjectAgent, []string{"{agent}"}},
	"agent.revoke":       {SubjectAgent, []string{"{agent}"}},
	"connection.create":  {SubjectConnection, []string{"body.name"}},
	"connection.revoke":  {SubjectConnection, []string{"{connection}"}},
	"source.bind":        {SubjectSource, []string{"{connection}", "{source}"}},
	"tool.lock":          {SubjectTool, []string{"{connection}", "{tool}"}},
	"tool.unlock":        {SubjectTool, []string{"{connection}", "{tool}"}},
	"tool.approval":      {SubjectTool, []string{"{connection}", "{tool}"}},
	"capability.install": {SubjectCapability, []string{"body"}},
	"request.decide":     {SubjectRequest, []string{"{id}"}},
	"schedule.create":    {SubjectAgent, []string{"body.task.agent"}},
	"schedule.resume":    {SubjectSchedule, []string{"{schedule}"}},
	"schedule.run_now":   {SubjectSchedule, []string{"{schedule}"}},
	"schedule.delete":    {SubjectSchedule, []string{"{schedule}"}},
	"budget.set":         {SubjectBudget, []string{"{budget}"}},
	"budget.remove":      {SubjectBudget, []string{"{budget}"}},
}

// Mints are the consent operations that make a credential: creating an Agent (its
// token), replacing an Agent's token, creating a Connection (its key). Making a delegate
// is member-only already. No [delegate_policy] may exempt one (docs/delegates.md): a
// credential a delegate minted without a card would outlive the delegate's revocation, so
// each stays a card its member confirms.
var Mints = []string{"agent.create", "agent.token", "connection.create"}

// ForRoute returns the operation served at pattern; one the table lacks is member only.
func ForRoute(pattern string) Operation {
	if i := slices.IndexFunc(Table, func(o Operation) bool { return o.Route == pattern }); i >= 0 {
		return Table[i]
	}
	return Operation{Name: pattern, Route: pattern, Class: MemberOnly, Changes: "not classed: closed to delegates"}
}

// ByName returns the operation named name, or ok false.
func ByName(name string) (Operation, bool) {
	if i := slices.IndexFunc(Table, func(o Operation) bool { return o.Name == name }); i >= 0 {
		return Table[i], true
	}
	return Operation{}, false
}

// PathValues matches path (escaped, as sent) against o's route and returns the values of
// its wildcards, unescaped; ok is false when path is not one of o's.
func (o Operation) PathValues(path string) (map[string]string, bool) {
	_, pattern, _ := strings.Cut(o.Route, " ")
	want, got := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(want) != len(got) {
		return nil, false
	}
	values := map[string]string{}
	for i, w := range want {
		if strings.HasPrefix(w, "{") && strings.HasSuffix(w, "}") {
			v, err := url.PathUnescape(got[i])
			if err != nil || v == "" {
				return nil, false
			}
			values[w[1:len(w)-1]] = v
			continue
		}
		if w != got[i] {
			return nil, false
		}
	}
	return values, true
}

// Method is the HTTP method of o's route.
func (o Operation) Method() string {
	m, _, _ := strings.Cut(o.Route, " ")
	return m
}
