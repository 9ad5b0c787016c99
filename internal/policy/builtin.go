package policy

import "github.com/docketrun/docket/internal/contract"

// The built-in version 1 of each kind, in force until a member publishes another. They
// keep today's installs as they are: nothing delegated, Agents unattended, known failures
// retried up to three attempts.
const (
	builtinDelegation = `# Built-in delegation policy: nothing is delegated, so every request waits for a member.
[delegation_policy]
`
	builtinAutonomy = `# Built-in autonomy policy: new Agents start unattended, with no daily bound.
[autonomy_policy]
default_level           = "unattended"
max_operations_per_day  = 0
require_acknowledgement = false
`
	builtinDelegate = `# Built-in delegate policy: no consent operation is exempt, so each is a card a member confirms.
[delegate_policy]
exempt = []
`
	builtinRecovery = `# Built-in recovery policy.
[recovery_policy]
retry_failed    = true
max_attempts    = 3
requeue_refused = true
`
	builtinHook = `# Built-in hook policy: every coding-agent tool call needs a decision.
[hook_policy]
default = "decide"
`
	builtinArtifact = `# Built-in artifact policy: artifacts are kept for the server's retention (30 days unless serve sets another).
[artifact_policy]
`
)

// BuiltinText returns the text of kind's built-in version 1.
func BuiltinText(kind contract.PolicyKind) string {
	switch kind {
	case contract.PolicyDelegation:
		return builtinDelegation
	case contract.PolicyAutonomy:
		return builtinAutonomy
	case contract.PolicyRecovery:
		return builtinRecovery
	case contract.PolicyDelegate:
		return builtinDelegate
	case contract.PolicyHook:
		return builtinHook
	case contract.PolicyArtifact:
		return builtinArtifact
	}
	return ""
}

// Builtin returns kind's built-in version 1, parsed; the zero Document for a kind that is
// not one of [contract.PolicyKinds].
func Builtin(kind contract.PolicyKind) Document {
	switch kind {
	case contract.PolicyDelegation:
		return Document{Kind: kind, Delegation: &Delegation{}}
	case contract.PolicyAutonomy:
		return Document{Kind: kind, Autonomy: &Autonomy{DefaultLevel: LevelUnattended}}
	case contract.PolicyRecovery:
		return Document{Kind: kind, Recovery: &Recovery{RetryFailed: true, MaxAttempts: 3, RequeueRefused: true, RetryBy: RetryByOrchestrator}}
	case contract.PolicyDelegate:
		return Document{Kind: kind, Delegate: &Delegate{Exempt: []string{}}}
	case contract.PolicyHook:
		return Document{Kind: kind, Hook: &Hook{Default: contract.HookDecide}}
	case contract.PolicyArtifact:
		return Document{Kind: kind, Artifact: &Artifact{}}
	}
	return Document{}
}

// ParseKind returns the kind s names, or a refusal that lists the kinds.
func ParseKind(s string) (contract.PolicyKind, error) {
	for _, k := range contract.PolicyKinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", contract.Errorf(contract.CodeInvalidArgument, "%.40q is not a policy kind; use delegation, autonomy, recovery, delegate, hook or artifact", s)
}
