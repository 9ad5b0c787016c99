package board

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// BatchResult is what an applied batch changed.
type BatchResult struct {
	// NodeIDs holds, per operation, the node it created (for revise_fact, the new node) or
	// retracted.
	NodeIDs []string `json:"nodeIds"`
	// Changes are the node records the authority persists, in order.
	Changes []contract.NodeChange `json:"changes"`
}

// reservedPrefixes are node id prefixes the Board mints; a caller may not choose them,
// so that a caller's id never collides with a later generated one.
var reservedPrefixes = []string{"n-", "cap-", "case-"}

// ApplyBatch applies batch for by: every operation lands, or none does.
// It checks every operation first, then applies them in order; if one fails, the ones
// before it are undone and the Board is exactly as it was. The error is a
// *contract.OpError naming the failing operation and wrapping a *contract.Error.
//
// Missing node ids are filled from the content, the author and the Case, so the same
// batch on the same Board gives the same ids; asserting a fact the same author already
// asserted with a generated id is a no-op that returns the existing id.
//
// Facts in a row that no rule reads are asserted in one engine mutation, not one each
// ([Board.applySteps]): the same Board, ids and refusals, at less cost.
func (b *Board) ApplyBatch(by Author, batch contract.Batch) (BatchResult, error) {
	return b.applyBatch(by, batch, applyGrouped)
}

// applyMode is how applyBatch applies a batch's steps. ApplyBatch groups; the other
// modes are its tests' (the oracle, and the grouped path alone).
type applyMode int

const (
	// applyGrouped asserts each run of quiet facts in one engine mutation
	// ([Board.applySteps]), and runs a batch it refuses again a step at a time.
	applyGrouped applyMode = iota
	// applyGroupedOnly is applyGrouped without the second run.
	applyGroupedOnly
	// applyStepwise applies every step by a mutation of its own.
	applyStepwise
)

// applyBatch is ApplyBatch, applying the steps as mode says.
func (b *Board) applyBatch(by Author, batch contract.Batch, mode applyMode) (BatchResult, error) {
	if err := batch.Validate(); err != nil {
		return BatchResult{}, err
	}
	tier, err := by.factTier()
	if err != nil {
		return BatchResult{}, contract.NewOpError(0, batch.Operations[0].Op, err)
	}
	steps := make([]step, len(batch.Operations))
	for i, op := range batch.Operations {
		s, err := b.prepare(by, tier, op)
		if err != nil {
			return BatchResult{}, contract.NewOpError(i, op.Op, err)
		}
		steps[i] = s
	}
	res, grouped, err := b.applySteps(by, tier, steps, mode != applyStepwise)
	if err != nil && grouped && mode == applyGrouped {
		// A refusal of the batch run with some facts asserted together: the Board is as
		// it was, and the batch runs again a step at a time, whose refusal (the failing
		// operation, and what its own mutation says) is the one the batch gives.
		res, _, err = b.applySteps(by, tier, steps, false)
	}
	return res, err
}

// applySteps applies steps in order in one txn, all or nothing. With group set, each run
// of two or more quiet steps in a row ([Board.quiet]) is applied by [txn.addQuiet], its
// facts asserted in one engine mutation rather than one each; grouped says whether any
// was, and then err is only a refusal, for ApplyBatch to find again step by step.
// Asserting facts that no rule reads derives nothing, so the one mutation leaves the
// engine, the nodes and their order exactly as one mutation each would, and it refuses
// only where one of those would (a fact cap, a malformed fact, an id in use); a rule an
// earlier step of the batch adds is read before the run after it is formed.
func (b *Board) applySteps(by Author, tier contract.Tier, steps []step, group bool) (res BatchResult, grouped bool, err error) {
	t := b.begin()
	ids := make([]string, len(steps))
	for i := 0; i < len(steps); {
		if group {
			j := i
			for j < len(steps) && b.quiet(steps[j]) {
				j++
			}
			if j-i >= 2 {
				grouped = true
				if err := t.addQuiet(steps[i:j], ids[i:j]); err != nil {
					t.rollback()
					return BatchResult{}, true, err
				}
				i = j
				continue
			}
		}
		id, err := b.applyStep(t, by, tier, steps[i])
		if err != nil {
			t.rollback()
			return BatchResult{}, grouped, contract.NewOpError(i, steps[i].op.Op, err)
		}
		ids[i] = id
		i++
	}
	return BatchResult{NodeIDs: ids, Changes: t.commit()}, grouped, nil
}

// quiet reports whether s only puts a node on the Board that derives nothing: a goal,
// which the engine does not hold, or a fact of a relation no rule reads.
func (b *Board) quiet(s step) bool {
	switch {
	case s.node == nil:
		return false
	case s.op.Op == contract.OpDeclareGoal:
		return true
	case s.op.Op == contract.OpAssertFact:
		return !b.eng.Reads(s.node.atom.Pred, s.node.atom.Neg)
	}
	return false
}

// step is a checked operation: the node it creates, or the node id it removes or revises.
type step struct {
	op        contract.Operation
	node      *node // assert_fact, declare_goal, add_axiom, derive_aggregate, revise_fact (new content)
	generated bool  // node's id was generated
}

// prepare checks op against the Board as it is before the batch: syntax of atoms and
// rules, the author's rights, Case-local rules. Checks that depend on earlier operations
// of the same batch (a retracted id) happen while applying.
func (b *Board) prepare(by Author, tier contract.Tier, op contract.Operation) (step, error) {
	s := step{op: op}
	if op.NodeID != "" && op.Op != contract.OpRetractNode && op.Op != contract.OpReviseFact {
		for _, p := range reservedPrefixes {
			if strings.HasPrefix(op.NodeID, p) {
				return s, contract.Errorf(contract.CodeInvalidArgument,
					"the nodeId %q starts with %q, which the Board reserves for ids it mints; choose another or leave nodeId out", op.NodeID, p)
			}
		}
	}
	if op.CaseID != "" {
		if err := b.checkLocal(op.CaseID); err != nil {
			return s, err
		}
	}
	switch op.Op {
	case contract.OpAssertFact, contract.OpReviseFact:
		a, err := engineAtom(op.Atom.Predicate, op.Atom.Args, op.Atom.Negated, false, nil)
		if err != nil {
			return s, err
		}
		if err := by.checkWord(a.Pred); err != nil {
			return s, err
		}
		s.node = &node{atom: a, rec: contract.Node{Kind: contract.NodeFact, CreatedBy: by.Principal, Tier: tier,
			Atom: ptr(wireAtom(a)), CaseID: op.CaseID}}
	case contract.OpDeclareGoal:
		a, err := engineAtom(op.Atom.Predicate, op.Atom.Args, op.Atom.Negated, true, &anon{})
		if err != nil {
			return s, err
		}
		s.node = &node{atom: a, rec: contract.Node{Kind: contract.NodeGoal, CreatedBy: by.Principal, Tier: tier,
			Atom: ptr(wireAtom(a)), CaseID: op.CaseID}}
	case contract.OpAddAxiom, contract.OpDeriveAggregate:
		if err := b.checkRuleRight(by, op.CaseID); err != nil {
			return s, err
		}
		r, err := engineRule("", *op.Rule, op.Aggregate, tier)
		if err != nil {
			return s, err
		}
		s.node = &node{rule: &r, rec: contract.Node{Kind: contract.NodeRule, CreatedBy: by.Principal, Tier: tier,
			Rule: wireRule(r), Aggregate: wireAggregate(r), CaseID: op.CaseID}}
	}
	if s.node != nil && op.Op != contract.OpReviseFact {
		s.node.rec.NodeID = op.NodeID
		if op.NodeID == "" {
			s.node.rec.NodeID, s.generated = b.mintID(s.node), true
		}
		if s.node.rule != nil {
			s.node.rule.ID = s.node.rec.NodeID
		}
	}
	return s, nil
}

// mintID returns the id of a node from its kind, author, tier, Case and content: "n-"
// and the first 8 bytes, in hex, of the [digest] of those five parts. The parts are
// hashed from one buffer on the stack and the id written in one allocation, since a
// batch mints an id for each fact it asserts.
func (b *Board) mintID(n *node) string {
	var scratch [256]byte
	buf := scratch[:0]
	for _, part := range [...]string{string(n.rec.Kind), string(n.rec.CreatedBy), n.rec.Tier.String(), string(n.rec.CaseID)} {
		buf = append(append(buf, part...), 0)
	}
	if n.rec.Kind == contract.NodeRule {
		buf = append(buf, n.rule.String()...)
	} else {
		buf = n.atom.AppendTo(buf)
	}
	sum := sha256.Sum256(append(buf, 0))
	var id [2 + 16]byte
	copy(id[:], "n-")
	hex.Encode(id[2:], sum[:8])
	return string(id[:])
}

func (b *Board) applyStep(t *txn, by Author, tier contract.Tier, s step) (string, error) {
	switch s.op.Op {
	case contract.OpRetractNode:
		if err := b.checkRemove(by, s.op.NodeID, false); err != nil {
			return "", err
		}
		return s.op.NodeID, t.remove(s.op.NodeID)
	case contract.OpReviseFact:
		if err := b.checkRemove(by, s.op.NodeID, true); err != nil {
			return "", err
		}
		old := b.nodes[s.op.NodeID]
		s.node.rec.CaseID = old.rec.CaseID
		s.node.rec.NodeID = b.mintID(s.node)
		if err := t.remove(s.op.NodeID); err != nil {
			return "", err
		}
		return s.node.rec.NodeID, b.addOnce(t, s.node, true)
	}
	return s.node.rec.NodeID, b.addOnce(t, s.node, s.generated)
}

// addOnce adds n, treating a generated id that already names the same content as done.
func (b *Board) addOnce(t *txn, n *node, generated bool) error {
	if old, ok := b.nodes[n.rec.NodeID]; ok && generated && old.rec.Kind == n.rec.Kind {
		return nil
	}
	return t.add(n)
}

// checkRemove says whether by may retract (or revise) the node id.
func (b *Board) checkRemove(by Author, id string, revise bool) error {
	n, ok := b.nodes[id]
	if !ok {
		if _, derived := b.eng.Lookup(id); derived {
			return contract.Errorf(contract.CodeNotRetractable,
				"node %q is derived; it goes away when a premise it rests on is retracted — retract that premise instead", id)
		}
		return contract.Errorf(contract.CodeNodeNotFound, "no node %q is on the Board; check the id in the View", id)
	}
	switch {
	case n.rec.CreatedBy.Kind() == contract.PrincipalCapability:
		return contract.Errorf(contract.CodeNotRetractable,
			"node %q is a rule of %s; capability rules change only by installing a new release", id, n.rec.CreatedBy)
	case revise && n.rec.Kind != contract.NodeFact:
		return contract.Errorf(contract.CodeNotRetractable,
			"node %q is a %s, not a fact; revise_fact revises facts — retract it and add the new one", id, n.rec.Kind)
	case b.isRoot(id):
		return contract.Errorf(contract.CodeNotRetractable,
			"node %q is a Case's root; close the Case instead", id)
	case by.Principal.Kind() != contract.PrincipalMember && n.rec.CreatedBy != by.Principal:
		return contract.Errorf(contract.CodeNotRetractable,
			"node %q was created by %s; only its author or a member may retract or revise it", id, n.rec.CreatedBy)
	}
	return nil
}

// checkRuleRight says whether by may add a rule, globally or local to caseID.
func (b *Board) checkRuleRight(by Author, caseID contract.CaseID) error {
	switch by.Principal.Kind() {
	case contract.PrincipalTool:
		return contract.Errorf(contract.CodeInvalidArgument, "a tool adds facts, not rules; rules come from capabilities or agents")
	case contract.PrincipalAgent:
		if caseID == "" && !b.cfg.AllowAgentRules {
			return contract.Errorf(contract.CodeCaseLocalForbidden,
				"this project does not let agents add rules to the Board; open an exploration Case and pass its caseId to add a Case-local rule")
		}
	}
	return nil
}

// checkLocal says whether a node may be local to caseID: only a running exploration Case
// holds Case-local nodes.
func (b *Board) checkLocal(caseID contract.CaseID) error {
	c, err := b.liveCase(caseID)
	if err != nil {
		return err
	}
	if !c.Exploration {
		return contract.Errorf(contract.CodeCaseLocalForbidden,
			"Case %s is a %s Case; only exploration Cases hold Case-local nodes — leave caseId out to add to the Board, or open an exploration Case", caseID, c.CaseType)
	}
	return nil
}
