// Package policy parses and checks Docket's policy documents — [delegation_policy],
// [autonomy_policy], [recovery_policy], [delegate_policy], [hook_policy] and
// [artifact_policy] — strictly, naming file:line in every refusal,
// and holds the built-in version 1 of each kind.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/docketrun/docket/internal/authority/opclass"
	"github.com/docketrun/docket/internal/contract"
)

// MaxText bounds a policy document in bytes.
const MaxText = 64 << 10

// Autonomy levels.
const (
	LevelManual     = "manual"     // every write needs a person
	LevelAttended   = "attended"   // writes only inside a run window a member opened
	LevelUnattended = "unattended" // writes any time
)

// Class is one class of requests an orchestrator may decide: the Action (or the Tool) it
// names, and exactly one of Path, CommandPrefix and Agent.
type Class struct {
	Name          string `toml:"name"`
	Action        string `toml:"action"`
	Tool          string `toml:"tool"`
	Path          string `toml:"path"`           // a glob over the Source-relative path the call lands on
	CommandPrefix string `toml:"command_prefix"` // the start of one simple command
	Agent         string `toml:"agent"`          // the Agent a call starts work for
}

// Delegation is a [delegation_policy]: the classes an orchestrator may decide.
type Delegation struct {
	Classes []Class `toml:"class"`
}

// Autonomy is an [autonomy_policy].
type Autonomy struct {
	// DefaultLevel is the level new Agents start at.
	DefaultLevel string `toml:"default_level"`
	// MaxOperationsPerDay bounds the writes admitted per Agent per UTC day below
	// unattended; 0 means no bound.
	MaxOperationsPerDay int64 `toml:"max_operations_per_day"`
	// RequireAcknowledgement makes raising an Agent to unattended need a member's
	// recorded acknowledgement of Acknowledgement, the stated risk.
	RequireAcknowledgement bool   `toml:"require_acknowledgement"`
	Acknowledgement        string `toml:"acknowledgement"`
}

// Who retries failed Operations under a [recovery_policy] (retry_by).
const (
	// RetryByOrchestrator leaves every recovery act to an orchestrator or a member.
	RetryByOrchestrator = "orchestrator"
	// RetryByAuthority has the authority's own sweep retry, within the policy, an Agent's
	// latest Operation that failed since the policy was published; an orchestrator or a
	// member may still act as under RetryByOrchestrator.
	RetryByAuthority = "authority"
)

// Recovery is a [recovery_policy].
type Recovery struct {
	RetryFailed    bool   `toml:"retry_failed"`
	MaxAttempts    int64  `toml:"max_attempts"`
	RequeueRefused bool   `toml:"requeue_refused"`
	RetryBy        string `toml:"retry_by"` // RetryByOrchestrator or RetryByAuthority
	// HoldCases has the authority pause a Case while one of its executed Actions has an
	// outcome only a person can settle (needs_person), until a member reconciles it.
	HoldCases bool `toml:"hold_cases"`
}

// Delegate is a [delegate_policy]: the consent operations a member's delegate
// runs itself, without a card. It can never name a member-only operation, so publishing
// a policy, managing members, sessions and delegates, autonomy and windows, and
// confirming a card always stay with a member acting itself.
type Delegate struct {
	Exempt []string `toml:"exempt"` // operation names, as docket operation list prints them
}

// Exempts reports whether d lets a delegate run operation without a card.
// An operation that mints a credential ([opclass.Mints]) is never exempt, whatever a
// version names: Parse refuses such a version, and this holds for any read otherwise.
func (d *Delegate) Exempts(operation string) bool {
	return slices.Contains(d.Exempt, operation) && !slices.Contains(opclass.Mints, operation)
}

// Document is one parsed policy: its kind and the table of that kind.
type Document struct {
	Kind       contract.PolicyKind
	Delegation *Delegation
	Autonomy   *Autonomy
	Recovery   *Recovery
	Delegate   *Delegate
	Hook       *Hook
	Artifact   *Artifact
}

// file is a policy document as TOML: exactly one of its tables is set.
type file struct {
	Delegation *Delegation `toml:"delegation_policy"`
	Autonomy   *Autonomy   `toml:"autonomy_policy"`
	Recovery   *Recovery   `toml:"recovery_policy"`
	Delegate   *Delegate   `toml:"delegate_policy"`
	Hook       *Hook       `toml:"hook_policy"`
	Artifact   *Artifact   `toml:"artifact_policy"`
}

// keys are the key paths a document may set, spelled exactly.
var keys = []string{
	"delegation_policy", "delegation_policy.class",
	"delegation_policy.class.name", "delegation_policy.class.action", "delegation_policy.class.tool",
	"delegation_policy.class.path", "delegation_policy.class.command_prefix", "delegation_policy.class.agent",
	"autonomy_policy", "autonomy_policy.default_level", "autonomy_policy.max_operations_per_day",
	"autonomy_policy.require_acknowledgement", "autonomy_policy.acknowledgement",
	"recovery_policy", "recovery_policy.retry_failed", "recovery_policy.max_attempts", "recovery_policy.requeue_refused",
	"recovery_policy.retry_by", "recovery_policy.hold_cases",
	"delegate_policy", "delegate_policy.exempt",
	"hook_policy", "hook_policy.default", "hook_policy.profile", "hook_policy.profile.agent", "hook_policy.profile.default",
	"hook_policy.profile.free", "hook_policy.profile.decide", "hook_policy.profile.refuse",
	"artifact_policy", "artifact_policy.retention_days",
}

// Parse decodes and checks the policy document src, read from name. A refusal is a
// *contract.Error with code policy_invalid whose teaching starts with name:line (or name
// alone when no line applies) and says what to change.
func Parse(name string, src []byte) (Document, error) {
	loc := locator{name: name, lines: strings.Split(string(src), "\n")}
	if len(src) > MaxText {
		return Document{}, loc.refuse(0, "the document is over %d bytes; a policy is a short list of rules", MaxText)
	}
	var f file
	md, err := toml.NewDecoder(bytes.NewReader(src)).Decode(&f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return Document{}, loc.refuse(pe.Position.Line, "the document is not valid TOML: %s", pe.Message)
		}
		if m := typeErrRE().FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			words, ok := contract.TOMLTypeWords(m[3])
			if !ok {
				words = m[3]
			}
			return Document{}, loc.refuse(line, "the value of %s is wrong: %s", m[2], words)
		}
		return Document{}, loc.refuse(0, "the document does not decode: %v", err)
	}
	// BurntSushi/toml matches keys to fields ignoring case, so every key is checked
	// against the exact spelling here; this also refuses unknown keys.
	for _, k := range md.Keys() {
		if !slices.Contains(keys, k.String()) {
			hint := ""
			if near, ok := nearestKey(k); ok {
				hint = fmt.Sprintf(" (did you mean %q?)", near)
			}
			return Document{}, loc.refuse(loc.keyLine(k), "unknown key %q%s; the keys of each policy are listed in docs/policies.md, spelled in lower case", k.String(), hint)
		}
	}
	var d Document
	n := 0
	if f.Delegation != nil {
		n++
		d.Kind, d.Delegation = contract.PolicyDelegation, f.Delegation
	}
	if f.Autonomy != nil {
		n++
		d.Kind, d.Autonomy = contract.PolicyAutonomy, f.Autonomy
	}
	if f.Recovery != nil {
		n++
		d.Kind, d.Recovery = contract.PolicyRecovery, f.Recovery
	}
	if f.Delegate != nil {
		n++
		d.Kind, d.Delegate = contract.PolicyDelegate, f.Delegate
	}
	if f.Hook != nil {
		n++
		d.Kind, d.Hook = contract.PolicyHook, f.Hook
	}
	if f.Artifact != nil {
		n++
		d.Kind, d.Artifact = contract.PolicyArtifact, f.Artifact
	}
	switch {
	case n == 0:
		return Document{}, loc.refuse(0, "the document holds no policy; start it with one of [delegation_policy], [autonomy_policy], [recovery_policy], [delegate_policy], [hook_policy] or [artifact_policy]")
	case n > 1:
		return Document{}, loc.refuse(0, "the document holds %d policies; publish each kind from its own file, so each has its own versions", n)
	}
	if err := d.check(&loc, md); err != nil {
		return Document{}, err
	}
	return d, nil
}

// nearestKey is the known key k most likely misspells: one beside it (under the same
// table) whose last part is a near miss of k's.
func nearestKey(k toml.Key) (string, bool) {
	parent := strings.Join(k[:len(k)-1], ".")
	var names []string
	for _, known := range keys {
		p, last := "", known
		if i := strings.LastIndexByte(known, '.'); i >= 0 {
			p, last = known[:i], known[i+1:]
		}
		if p == parent {
			names = append(names, last)
		}
	}
	last := k[len(k)-1]
	near, ok := contract.Nearest(last, names)
	for _, n := range names {
		if strings.EqualFold(n, last) { // spelled in another case: the key itself, in lower case
			near, ok = n, true
		}
	}
	if !ok {
		return "", false
	}
	if parent == "" {
		return near, true
	}
	return parent + "." + near, true
}

// typeErrRE matches BurntSushi/toml's type errors: `toml: line 2 (last key "version"): …`.
var typeErrRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`) })

// shellSyntax are the characters that make a command more than one simple command.
const shellSyntax = ";&|$`<>()\n\\"

func (d *Document) check(loc *locator, md toml.MetaData) error {
	switch {
	case d.Delegation != nil:
		empty := emptyClassFields(md, d.Delegation.Classes)
		seen := map[string]bool{}
		for i, c := range d.Delegation.Classes {
			line := loc.header("delegation_policy.class", i)
			if f := empty[i]; f != "" {
				return loc.refuse(line, "class %d sets %s to the empty string, which names nothing; give it a value or leave the key out", i+1, f)
			}
			if c.Name == "" {
				return loc.refuse(line, "class %d has no name; give each class a name its decisions can be traced to", i+1)
			}
			if seen[c.Name] {
				return loc.refuse(line, "two classes are named %q; give each class its own name", c.Name)
			}
			seen[c.Name] = true
			if (c.Action == "") == (c.Tool == "") {
				return loc.refuse(line, "class %q must name exactly one of action and tool: the Action (or the Tool) whose requests it covers", c.Name)
			}
			set := 0
			for _, v := range []string{c.Path, c.CommandPrefix, c.Agent} {
				if v != "" {
					set++
				}
			}
			if set != 1 {
				return loc.refuse(line, "class %q must set exactly one of path, command_prefix and agent (it sets %d); split it into one class per kind of call", c.Name, set)
			}
			if err := checkPath(c.Path); err != nil {
				return loc.refuse(line, "class %q: %v", c.Name, err)
			}
			if err := checkCommandPrefix(c.CommandPrefix); err != nil {
				return loc.refuse(line, "class %q: %v", c.Name, err)
			}
		}
	case d.Autonomy != nil:
		a := d.Autonomy
		if !md.IsDefined("autonomy_policy", "default_level") {
			a.DefaultLevel = LevelUnattended
		}
		if !slices.Contains([]string{LevelManual, LevelAttended, LevelUnattended}, a.DefaultLevel) {
			return loc.refuse(loc.keyLine(toml.Key{"autonomy_policy", "default_level"}), "default_level %q is not a level; use manual, attended or unattended", a.DefaultLevel)
		}
		if a.MaxOperationsPerDay < 0 {
			return loc.refuse(loc.keyLine(toml.Key{"autonomy_policy", "max_operations_per_day"}), "max_operations_per_day is negative; use 0 for no bound or a positive count")
		}
		if a.RequireAcknowledgement && strings.TrimSpace(a.Acknowledgement) == "" {
			return loc.refuse(loc.keyLine(toml.Key{"autonomy_policy", "require_acknowledgement"}), "require_acknowledgement needs acknowledgement: the risk a member reads and acknowledges before raising an Agent to unattended")
		}
	case d.Delegate != nil:
		return checkDelegate(loc, d.Delegate)
	case d.Recovery != nil:
		r := d.Recovery
		b := Builtin(contract.PolicyRecovery).Recovery
		if !md.IsDefined("recovery_policy", "retry_failed") {
			r.RetryFailed = b.RetryFailed
		}
		if !md.IsDefined("recovery_policy", "requeue_refused") {
			r.RequeueRefused = b.RequeueRefused
		}
		if !md.IsDefined("recovery_policy", "max_attempts") {
			r.MaxAttempts = b.MaxAttempts
		}
		if !md.IsDefined("recovery_policy", "retry_by") {
			r.RetryBy = b.RetryBy
		}
		if r.RetryBy != RetryByOrchestrator && r.RetryBy != RetryByAuthority {
			return loc.refuse(loc.keyLine(toml.Key{"recovery_policy", "retry_by"}), "retry_by is %q; use \"orchestrator\" (an orchestrator or a member acts) or \"authority\" (the authority also retries by itself)", r.RetryBy)
		}
		if r.MaxAttempts < 1 || r.MaxAttempts > 10 {
			return loc.refuse(loc.keyLine(toml.Key{"recovery_policy", "max_attempts"}), "max_attempts is %d; use 1 to 10 (attempts count the first run)", r.MaxAttempts)
		}
	case d.Hook != nil:
		return d.Hook.check(loc, md)
	case d.Artifact != nil:
		return d.Artifact.check(loc, md)
	}
	return nil
}

// emptyClassFields returns, by class index, the first of path, command_prefix and agent
// the document sets to "": decoded, an empty value reads as a key left out, so the keys
// themselves are read. BurntSushi/toml lists the header key of each [[class]] before its
// keys.
func emptyClassFields(md toml.MetaData, classes []Class) map[int]string {
	out := map[int]string{}
	i := -1
	for _, k := range md.Keys() {
		switch {
		case k.String() == "delegation_policy.class":
			i++
		case len(k) == 3 && k[0] == "delegation_policy" && k[1] == "class" && i >= 0 && i < len(classes) && out[i] == "":
			c := classes[i]
			if v := map[string]string{"path": c.Path, "command_prefix": c.CommandPrefix, "agent": c.Agent}; v[k[2]] == "" {
				if _, ok := v[k[2]]; ok {
					out[i] = k[2]
				}
			}
		}
	}
	return out
}

// checkDelegate refuses an exemption of anything but a consent operation: a member-only
// operation (which includes publishing any policy) can never be exempted, and an
// operational one needs no exemption.
func checkDelegate(loc *locator, d *Delegate) error {
	seen := map[string]bool{}
	for _, name := range d.Exempt {
		line := loc.valueLine("delegate_policy.exempt", name)
		op, ok := opclass.ByName(name)
		switch {
		case seen[name]:
			return loc.refuse(line, "exempt names %q twice; name each operation once", name)
		case !ok:
			return loc.refuse(line, "exempt names %q, which is no operation; docket operation list prints their names", name)
		case op.Class == opclass.MemberOnly:
			return loc.refuse(line, "exempt names %s, a member-only operation: members, sessions, delegates, publishing any policy, autonomy, windows and confirming a card stay with a member acting itself, so no version may exempt them; remove it", name)
		case op.Class != opclass.Consent:
			return loc.refuse(line, "exempt names %s, which is %s: a delegate runs it without a card already; remove it", name, op.Class)
		case slices.Contains(opclass.Mints, name):
			return loc.refuse(line, "exempt names %s, which makes a credential (an Agent's token or a Connection's key): one a delegate made without a card would outlive the delegate's revocation, so no version may exempt it; remove it", name)
		case name == "request.decide":
			// The store takes a decision only from a live member or orchestrator by id.
			return loc.refuse(line, "exempt names request.decide: a Request is decided by a member acting itself or by an orchestrator under the delegation policy, so a delegate's decision stays a card; remove it")
		}
		seen[name] = true
	}
	return nil
}

// checkPath refuses a path glob that could leave its Source or does not compile.
func checkPath(p string) error {
	if p == "" {
		return nil
	}
	switch {
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute; paths are relative to the Source, such as \"docs/*.md\"", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return fmt.Errorf("path %q has a .. segment; name paths inside the Source", p)
	}
	if _, err := path.Match(strings.ReplaceAll(p, "**", "*"), ""); err != nil {
		return fmt.Errorf("path %q is not a glob (%v); use *, ? and [a-z] within a segment and ** for any depth", p, err)
	}
	return nil
}

// locator finds lines of a document, for refusals. BurntSushi/toml reports lines only
// for syntax and type errors, so the rest is read from the text.
type locator struct {
	name  string
	lines []string
}

// refuse returns the policy_invalid refusal at line (0: the file as a whole).
func (l *locator) refuse(line int, format string, args ...any) error {
	where := l.name
	if line > 0 {
		where += ":" + strconv.Itoa(line)
	}
	return &contract.Error{Code: contract.CodePolicyInvalid, Teaching: where + ": " + fmt.Sprintf(format, args...)}
}

// header returns the line of the index-th [[table]] header, or 0.
func (l *locator) header(table string, index int) int {
	n := 0
	for i, line := range l.lines {
		if strings.ReplaceAll(strings.TrimSpace(line), " ", "") == "[["+table+"]]" {
			if n == index {
				return i + 1
			}
			n++
		}
	}
	return 0
}

// valueLine returns the first line from the one that sets key that holds value as a
// quoted string, or the key's line, or 0.
func (l *locator) valueLine(key, value string) int {
	k := strings.Split(key, ".")
	from := l.keyLine(toml.Key(k))
	quoted := strconv.Quote(value)
	for i := max(from-1, 0); i < len(l.lines); i++ {
		if strings.Contains(l.lines[i], quoted) || strings.Contains(l.lines[i], "'"+value+"'") {
			return i + 1
		}
	}
	return from
}

// keyLine returns the first line that sets or opens the last piece of k, or 0.
func (l *locator) keyLine(k toml.Key) int {
	if len(k) == 0 {
		return 0
	}
	last := regexp.QuoteMeta(k[len(k)-1])
	re := regexp.MustCompile(`^\s*"?` + last + `"?\s*=|^\s*\[\[?\s*([^\]]*\.)?"?` + last + `"?\s*\]`)
	for i, line := range l.lines {
		if re.MatchString(line) {
			return i + 1
		}
	}
	return 0
}
