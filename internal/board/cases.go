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
	if id, ok := b.open[caseType+"\x00"+keyDigest]; ok {
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
	return out
}

func (b *Board) putCase(c *contract.Case) {
	if _, ok := b.cases[c.CaseID]; !ok {
		b.caseSeq = append(b.caseSeq, c.CaseID)
	}
	b.cases[c.CaseID] = c
	if c.Status != contract.CaseClosed {
		b.open[c.CaseType+"\x00"+c.KeyDigest] = c.CaseID
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
		return nil, contract.Errorf(contract.CodeCasePaused, "Case %s is paused; resume it first", id)
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

// PauseCase pauses a running Case: its Actions are blocked (case_paused) until
// [Board.ResumeCase]. It returns the record to persist.
func (b *Board) PauseCase(id contract.CaseID) (contract.Case, error) {
	c, err := b.liveCase(id)
	if err != nil {
		return contract.Case{}, err
	}
	c.Status = contract.CasePaused
	return caseCopy(c), nil
}

// ResumeCase resumes a paused Case.
func (b *Board) ResumeCase(id contract.CaseID) (contract.Case, error) {
	c, ok := b.cases[id]
	switch {
	case !ok:
		return contract.Case{}, contract.Errorf(contract.CodeCaseNotFound, "no Case %q exists; check the caseId in the View", id)
	case c.Status == contract.CaseClosed:
		return contract.Case{}, contract.Errorf(contract.CodeCaseClosed, "Case %s is closed (%s); open a new Case to continue", id, c.Disposition)
	case c.Status == contract.CaseRunning:
		return contract.Case{}, contract.Errorf(contract.CodeInvalidArgument, "Case %s is already running; nothing to resume", id)
	}
	c.Status = contract.CaseRunning
	return caseCopy(c), nil
}
