package contract

import "time"

// Model providers an Agent profile names (the agent runtime's provider kinds).
const (
	ProviderAnthropic = "anthropic" // Anthropic Messages API
	ProviderOpenAI    = "openai"    // OpenAI Chat Completions or a compatible server
	ProviderEmulated  = "emulated"  // Chat Completions without tool support; tools in the prompt
	ProviderScripted  = "scripted"  // a script of tool calls; no inference
)

// Providers lists the provider names a profile may give, in the order they are taught.
var Providers = []string{ProviderOpenAI, ProviderAnthropic, ProviderEmulated, ProviderScripted}

// AgentProfile is how an Agent's runtime runs: the model it talks to, its
// budgets and instructions, and whether docket start runs it. Only its non-secret part is
// here: the model key stays in a file beside the runtime, and the profile names only that
// file's path.
type AgentProfile struct {
	Agent     AgentID `json:"agent"`
	AgentName string  `json:"agentName"`
	ProfileSpec
	SetBy Principal `json:"setBy"`
	SetAt time.Time `json:"setAt"`
	// Runtime is the last state docket start reported of the Agent's runtime; nil when
	// none was ever reported.
	Runtime *RuntimeStatus `json:"runtime,omitempty"`
	// Blueprint names the blueprint the profile was made from, at the digest it copied;
	// nil when it was set field by field. BlueprintState says whether that blueprint
	// still has that digest: BlueprintCurrent, BlueprintChanged or BlueprintRemoved.
	Blueprint      *BlueprintRef `json:"blueprint,omitempty"`
	BlueprintState string        `json:"blueprintState,omitempty"`
}

// ProfileSpec is what a member sets of a profile: PUT .../agents/{agent}/profile.
type ProfileSpec struct {
	Provider string `json:"provider"`           // one of Providers
	ModelURL string `json:"modelUrl,omitempty"` // the model endpoint's root; "" for scripted
	Model    string `json:"model,omitempty"`    // the model name the endpoint knows; "" for scripted
	// KeyFile is the path of the file holding the model key, on the machine of the runtime,
	// relative to its data dir or absolute; "" when the endpoint takes no key.
	KeyFile string `json:"keyFile,omitempty"`
	Script  string `json:"script,omitempty"` // scripted only: the script's path beside the runtime

	MaxTurns  int     `json:"maxTurns,omitempty"`  // model turns of one run; 0: no bound
	MaxTokens int64   `json:"maxTokens,omitempty"` // input plus output tokens of one run; 0: no bound
	MaxUSD    float64 `json:"maxUsd,omitempty"`    // US dollars of one run; 0: no bound

	// ContextWindow is the model's context window in tokens; 0: the runtime's own for a
	// model it knows, else its default (docs/workbench.md, "Long conversations").
	ContextWindow int `json:"contextWindow,omitempty"`

	// InstructionsFile is an AGENTS.md-style text, beside the runtime, given to the model
	// as its standing instructions; InstructionsDigest is the digest of its content when
	// the profile was set, which the runtime checks before it reads it to the model.
	InstructionsFile   string `json:"instructionsFile,omitempty"`
	InstructionsDigest string `json:"instructionsDigest,omitempty"`
	// Workspace is the directory, beside the runtime, the Agent works in: the AGENTS.md
	// and CLAUDE.md files from its root down to it are standing instructions, and the
	// skills under its .docket/skills and .claude/skills are listed to the model
	// (docs/workbench.md, "Instructions and skills"). "": none.
	Workspace string `json:"workspace,omitempty"`

	// Thinking asks a reasoning model to think: ThinkingOn, ThinkingOff, or "" for the
	// provider's default (docs/workbench.md, Reasoning models).
	Thinking string `json:"thinking,omitempty"`
	// ModelAttempts and ModelRetryWaitSeconds bound the retries of one model request
	// that failed for a reason that means later (a rate limit, an overloaded server, a cut
	// answer): the attempts in all, the first included, and the back-off waited in all;
	// 0 takes the runtime's defaults (docs/workbench.md, Model retries).
	ModelAttempts         int `json:"modelAttempts,omitempty"`
	ModelRetryWaitSeconds int `json:"modelRetryWaitSeconds,omitempty"`
	// ModelFirstByteSeconds and ModelIdleSeconds are a model request's deadlines: for its
	// answer's first byte, and between two reads of it; 0 takes the runtime's defaults
	// (docs/workbench.md, Model deadlines).
	ModelFirstByteSeconds int `json:"modelFirstByteSeconds,omitempty"`
	ModelIdleSeconds      int `json:"modelIdleSeconds,omitempty"`

	Enabled bool `json:"enabled"` // docket start runs a runtime for the Agent

	// Allow is what the Agent may use: the authority lists every other Action blocked
	// (not_in_profile) and refuses it at admission (docs/agents.md, "Blueprints"); nil
	// limits nothing.
	Allow *AllowList `json:"allow,omitempty"`
}

// SameRuntime reports whether a runtime started for p runs as one started for q would:
// every field alike but the allow-list, which the authority holds and the runtime never
// reads. docket start restarts a runtime whose profile changed otherwise; the pointer of
// Allow must not make an unchanged profile look changed on every read.
func (p ProfileSpec) SameRuntime(q ProfileSpec) bool {
	p.Allow, q.Allow = nil, nil
	return p == q
}

// Thinking settings of a profile.
const (
	ThinkingOn  = "on"
	ThinkingOff = "off"
)

// Bounds of a profile's retry settings.
const (
	MaxModelAttempts         = 20
	MaxModelRetryWaitSeconds = 3600
	MaxModelDeadlineSeconds  = 3600
)

// Runtime states docket start reports.
const (
	RuntimeStarting   = "starting"   // its process is being started
	RuntimeRunning    = "running"    // its process runs
	RuntimeRestarting = "restarting" // its process exited; it is started again after a back-off
	RuntimeFailed     = "failed"     // it cannot start (Reason says why); docket start tries again once the cause is fixed
	RuntimeStopped    = "stopped"    // docket start stopped it
	// RuntimeCrashLoop: its process exits soon after each start, again and again (Reason
	// says why, from its log); docket start keeps restarting it, each time later, and it
	// stays so until a process runs long enough (docs/workbench.md).
	RuntimeCrashLoop = "crash_loop"
)

// RuntimeStates lists the runtime states.
var RuntimeStates = []string{RuntimeStarting, RuntimeRunning, RuntimeRestarting, RuntimeFailed, RuntimeStopped, RuntimeCrashLoop}

// RuntimeStatus is the state of an Agent's supervised runtime, as docket start reports it
// (PUT .../agents/{agent}/runtime).
type RuntimeStatus struct {
	State    string `json:"state"`            // one of RuntimeStates
	Pid      int    `json:"pid,omitempty"`    // the runtime's process, while it runs
	Restarts int    `json:"restarts"`         // times it was started again since docket start began
	Reason   string `json:"reason,omitempty"` // why it exited or cannot start; never a secret
	// Reported is when the authority recorded the report; set by the authority.
	Reported time.Time `json:"reported,omitzero"`
}

// Profile codes.
const (
	CodeProfileInvalid Code = "profile_invalid" // a profile field that cannot work, named with the fix
)
