package board

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// rootSuffix ends the node id of every Case's root goal: "case-7:root".
const rootSuffix = ":root"

// OpenCase opens a Case of caseType for the business key and returns its record and the
// root goal node to persist. The caseId and root are minted from the
// Board's count of Cases, so the same calls on the same Board give the same ids.
//
// Refusals: case_type_unknown; case_business_key (key arguments missing, extra or
// variables); case_opening_missing (the opening predicate does not hold for the key);
// case_opening_not_trusted (it holds only below the opening floor); case_exists (a Case of
// this type with this key is open).
func (b *Board) OpenCase(by contract.Principal, caseType string, key contract.Args, at time.Time) (contract.Case, []contract.NodeChange, error) {
	if k := by.Kind(); k != contract.PrincipalAgent && k != contract.PrincipalMember {
		return contract.Case{}, nil, contract.Errorf(contract.CodeInvalidArgument,
			"only agents and members open Cases, not %q", by)
	}
	if err := b.CheckPin(caseType, key); err != nil {
		return contract.Case{}, nil, err
	}
	ct := b.caseTypes[caseType]
	if ct.Opening != "" {
		if err := b.checkOpening(ct.CaseType, key); err != nil {
			return contract.Case{}, nil, err
		}
	}
	keyDigest := digest(mustJSON(key)).String()
	if id, ok := b.open[openKeyOf(caseType, keyDigest)]; ok {
		return contract.Case{}, nil, contract.Errorf(contract.CodeCaseExists,
			"Case %s of type %s is already open for this key; focus it instead of opening another", id, caseType)
	}
	id := contract.CaseID("case-" + strconv.Itoa(len(b.cases)+1))
	root := &node{rec: contract.Node{NodeID: string(id) + rootSuffix, Kind: contract.NodeGoal, CreatedBy: by,
		Tier: contract.TierAsserted, CaseID: ""}}
	if ct.Acceptance != "" {
		a, err := keyAtom(ct.Acceptance, key)
		if err != nil {
			return contract.Case{}, nil, err
		}
		root.atom, root.rec.Atom = a, ptr(wireAtom(a))
	}
	t := b.begin()
	if err := t.add(root); err != nil {
		t.rollback()
		return contract.Case{}, nil, err
	}
	c := &contract.Case{
		CaseID: id, Root: root.rec.NodeID, CaseType: caseType, BusinessKey: maps.Clone(key),
		Status: contract.CaseRunning, Exploration: ct.Exploration,
		Release: ct.release, ReleaseDigest: ct.digest,
		ContractDigest: contractDigest(ct.CaseType), KeyDigest: keyDigest,
		OpenedBy: by, OpenedAt: at.UTC(),
	}
	b.putCase(c)
	return caseCopy(c), t.commit(), nil
}

// contractDigest pins a Case Type's contract: every field that decides what opens,
// binds and certifies its Cases.
func contractDigest(ct CaseType) string {
	return digest(mustJSON(struct {
		Name, KeyPredicate, Opening, OpeningFloor, Acceptance, Floor string
		KeyArgs, OncePerCase                                         []string
		Exploration                                                  bool
	}{ct.Name, ct.KeyPredicate, ct.Opening, ct.OpeningFloor.String(), ct.Acceptance, ct.Floor.String(),
		ct.KeyArgs, ct.OncePerCase, ct.Exploration})).String()
}

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic("board: marshal of a checked value: " + err.Error()) // keys and Case Types are checked before
	}
	return string(data)
}

// caseCopy returns *c with its own key map and slices, so that a caller cannot change the
// Board's Case through what it was given.
func caseCopy(c *contract.Case) contract.Case {
	out := *c
	out.BusinessKey = maps.Clone(c.BusinessKey)
	out.Terminal = slices.Clone(c.Terminal)
	out.Holds = slices.Clone(c.Holds)
	return out
}

// openKey is c's entry in open ([openKeyOf]).
func openKey(c *contract.Case) string { return openKeyOf(c.CaseType, c.KeyDigest) }

// openKeyOf is the entry in open of the Case of caseType whose key digests to keyDigest.
func openKeyOf(caseType, keyDigest string) string { return caseType + "\x00" + keyDigest }

func (b *Board) putCase(c *contract.Case) {
	b.keepCase(c.CaseID)
	if _, ok := b.cases[c.CaseID]; !ok {
		b.caseSeq = append(b.caseSeq, c.CaseID)
	}
	b.cases[c.CaseID] = c
	if c.Status != contract.CaseClosed {
		b.open[openKey(c)] = c.CaseID
	}
}

// CheckPin refuses a Case Type this Board does not have (case_type_unknown, naming the
// ones it has and the nearest) and a business key whose arguments are not exactly the
// Case Type's (case_business_key, naming them). It is the check of OpenCase, and of a
// task pinned to a Case Type and key when it is posted: a pin the project cannot honour
// is refused at the door, rather than queued to fail later in the model's run.
func (b *Board) CheckPin(caseType string, key contract.Args) error {
	ct, ok := b.caseTypes[caseType]
	if !ok {
		hint := ""
		if near, ok := contract.Nearest(caseType, b.caseTypeSeq); ok {
			hint = fmt.Sprintf(" (did you mean %s?)", near)
		}
		return contract.Errorf(contract.CodeCaseTypeUnknown,
			"no Case Type %q is installed%s; use one of %s, or install the capability that declares it", caseType, hint, strings.Join(b.caseTypeSeq, ", "))
	}
	return checkKey(ct.CaseType, key)
}

func checkKey(ct CaseType, key contract.Args) error {
	// An argument the key does not have first: a misspelt one is then named with the
	// argument it nearly is, rather than reported as that argument missing.
	for _, k := range slices.Sorted(maps.Keys(key)) {
		if !slices.Contains(ct.KeyArgs, k) {
			hint := ""
			if near, ok := contract.Nearest(k, ct.KeyArgs); ok {
				hint = fmt.Sprintf(" (did you mean %s?)", near)
			}
			return contract.Errorf(contract.CodeCaseBusinessKey,
				"%s is not part of the business key of %s%s; pass exactly %s", k, ct.Name, hint, strings.Join(ct.KeyArgs, ", "))
		}
	}
	for _, k := range ct.KeyArgs {
		v, ok := key[k]
		if !ok {
			return contract.Errorf(contract.CodeCaseBusinessKey,
				"the business key of %s needs %s; pass exactly %s", ct.Name, k, strings.Join(ct.KeyArgs, ", "))
		}
		if _, isVar := v.Var(); isVar || v.IsZero() {
			return contract.Errorf(contract.CodeCaseBusinessKey,
				"the business key argument %s is %s; give the value of the Case's subject, not a variable", k, v)
		}
	}
	return nil
}

// checkOpening refuses a Case whose opening predicate does not hold for the key at the
// opening floor or stronger.
func (b *Board) checkOpening(ct CaseType, key contract.Args) error {
	pattern, err := keyAtom(ct.Opening, key)
	if err != nil {
		return err
	}
	best := contract.Tier(0)
	for e := range b.eng.Match(pattern) {
		if best == 0 || e.Tier.AtLeast(best) {
			best = e.Tier
		}
	}
	floor := ct.OpeningFloor
	if !floor.Valid() {
		floor = contract.TierAsserted
	}
	switch {
	case best == 0:
		return contract.Errorf(contract.CodeCaseOpeningMissing,
			"%s does not hold, so a %s Case cannot open; load it first (through a Tool whose Source attests %s)", pattern, ct.Name, ct.Opening)
	case !best.AtLeast(floor):
		return contract.Errorf(contract.CodeCaseOpeningNotTrusted,
			"%s holds only at tier %s, below the opening floor %s; load it through a Tool whose Source attests %s instead of asserting it", pattern, best, floor, ct.Opening)
	}
	return nil
}

// liveCase returns the Case id if it is open and running.
func (b *Board) liveCase(id contract.CaseID) (*contract.Case, error) {
	c, ok := b.cases[id]
	switch {
	case !ok:
		return nil, contract.Errorf(contract.CodeCaseNotFound, "no Case %q exists; check the caseId in the View", id)
	case c.Status == contract.CaseClosed:
		return nil, contract.Errorf(contract.CodeCaseClosed, "Case %s is closed (%s); open a new Case to continue", id, c.Disposition)
	case c.Status == contract.CasePaused:
		return nil, pausedError(c)
	}
	return c, nil
}

func (b *Board) isRoot(id string) bool {
	caseID, ok := strings.CutSuffix(id, rootSuffix)
	_, exists := b.cases[contract.CaseID(caseID)]
	return ok && exists
}

// Case returns the Case id.
func (b *Board) Case(id contract.CaseID) (contract.Case, bool) {
	c, ok := b.cases[id]
	if !ok {
		return contract.Case{}, false
	}
	return caseCopy(c), true
}

// Cases returns every Case, oldest first.
func (b *Board) Cases() []contract.Case {
	out := make([]contract.Case, 0, len(b.caseSeq))
	for _, id := range b.caseSeq {
		out = append(out, caseCopy(b.cases[id]))
	}
	return out
}

// Focus returns the root a caller focuses when it works on Case id; the caller (the
// authority) keeps the focus and passes it to [Board.View].
func (b *Board) Focus(id contract.CaseID) (contract.FocusedRoot, error) {
	c, ok := b.cases[id]
	if !ok {
		return contract.FocusedRoot{}, contract.Errorf(contract.CodeCaseNotFound, "no Case %q exists; check the caseId in the View", id)
	}
	return contract.FocusedRoot{CaseID: c.CaseID, Root: c.Root}, nil
}

// HoldCase places hold h on Case id, which pauses it: while any hold stands, the Case's
// writes and Actions are refused case_paused, naming the holds. A Case already paused
// takes one more hold; a closed one none; a policy holds a Case once per subject
// (already_exists). The hold's id is minted here, as Case ids are; h's At is taken in
// UTC. It returns the record to persist and the hold placed.
func (b *Board) HoldCase(id contract.CaseID, h contract.CaseHold) (contract.Case, contract.CaseHold, error) {
	c, ok := b.cases[id]
	switch {
	case !ok:
		return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeCaseNotFound, "no Case %q exists; check the Case id", id)
	case c.Status == contract.CaseClosed:
		return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeCaseClosed, "Case %s is closed (%s); only a running Case can be paused", id, c.Disposition)
	}
	h.Reason = strings.TrimSpace(h.Reason)
	switch {
	case h.Owner != contract.HoldMember && h.Owner != contract.HoldPolicy:
		return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeInvalidArgument, "a hold is a member's or a policy's, not %q", h.Owner)
	case h.Owner == contract.HoldPolicy && (h.Policy == "" || h.Subject == ""):
		return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeInvalidArgument, "a policy's hold names its policy and what it waits for")
	case h.Owner == contract.HoldMember && (h.Policy != "" || h.Subject != ""):
		return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeInvalidArgument, "a member's hold names no policy and no subject")
	case h.Reason == "":
		return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeInvalidArgument, "a hold needs a reason: say why Case %s is paused, so whoever finds it paused knows what to do", id)
	case len(h.Reason) > MaxHoldReason:
		return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeInvalidArgument, "a hold's reason is at most %d bytes; this one is %d", MaxHoldReason, len(h.Reason))
	case len(c.Holds) >= MaxHolds:
		return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeInvalidArgument, "Case %s already has %d holds, the most it takes; release one first", id, len(c.Holds))
	}
	if h.Owner == contract.HoldPolicy {
		for _, o := range c.Holds {
			if o.Owner == h.Owner && o.Policy == h.Policy && o.Subject == h.Subject {
				return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeAlreadyExists, "the %s policy already holds Case %s for %s (%s)", h.Policy, id, h.Subject, o.ID)
			}
		}
	}
	next := caseCopy(c)
	next.HoldSeq++
	h.ID, h.At = "hold-"+strconv.Itoa(next.HoldSeq), h.At.UTC()
	next.Holds = append(next.Holds, h)
	next.Status = contract.CasePaused
	b.keepCase(id)
	*c = next
	return caseCopy(c), h, nil
}

// Hold bounds: a Case is paused by a few holds, each with a sentence of why.
const (
	MaxHolds      = 16
	MaxHoldReason = 500
)

// ReleaseHold releases hold holdID of Case id for an owner of kind owner (and, for a
// policy's hold, of that policy): a member's hold is released by a member, a policy's only
// under its own policy. The Case runs again when no hold is left. It returns the record
// to persist and the hold released.
func (b *Board) ReleaseHold(id contract.CaseID, holdID string, owner contract.HoldOwner, policy string) (contract.Case, contract.CaseHold, error) {
	c, ok := b.cases[id]
	if !ok {
		return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeCaseNotFound, "no Case %q exists; check the Case id", id)
	}
	i := slices.IndexFunc(c.Holds, func(h contract.CaseHold) bool { return h.ID == holdID })
	if i < 0 {
		return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeHoldNotFound, "no hold %q stands on Case %s; its holds are listed on the Case (docket case show %s)", holdID, id, id)
	}
	h := c.Holds[i]
	if h.Owner != owner || h.Policy != policy {
		return contract.Case{}, contract.CaseHold{}, contract.Errorf(contract.CodeHoldNotOwner, "hold %s on Case %s is %s; %s", holdID, id, holdOwnerText(h), releasedBy(id, h))
	}
	next := caseCopy(c)
	next.Holds = slices.Delete(next.Holds, i, i+1)
	if len(next.Holds) == 0 {
		next.Holds = nil
		next.Status = contract.CaseRunning
	}
	b.keepCase(id)
	*c = next
	return caseCopy(c), h, nil
}

// pausedError refuses a write or Action in paused Case c, naming each hold and who
// releases it.
func pausedError(c *contract.Case) error {
	parts := make([]string, 0, len(c.Holds))
	for _, h := range c.Holds {
		parts = append(parts, fmt.Sprintf("%s (%s: %s; %s)", h.ID, holdOwnerText(h), h.Reason, releasedBy(c.CaseID, h)))
	}
	return contract.Errorf(contract.CodeCasePaused, "Case %s is paused by %s; it runs again when every hold is released", c.CaseID, strings.Join(parts, ", "))
}

// holdList names c's holds in a line of the View: each id with whose it is.
func holdList(c *contract.Case) string {
	parts := make([]string, 0, len(c.Holds))
	for _, h := range c.Holds {
		parts = append(parts, h.ID+" ("+holdOwnerText(h)+")")
	}
	return strings.Join(parts, ", ")
}

func holdOwnerText(h contract.CaseHold) string {
	if h.Owner == contract.HoldPolicy {
		return "the " + h.Policy + " policy's hold"
	}
	return "a member's hold, placed by " + string(h.By)
}

func releasedBy(id contract.CaseID, h contract.CaseHold) string {
	if h.Owner == contract.HoldPolicy {
		return "released only under the " + h.Policy + " policy, once what it waits for is done"
	}
	return "a member releases it with docket case resume " + string(id) + " or on the Case's page"
}
