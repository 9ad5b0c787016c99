package bundle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// The offline verifications of docket events verify, with no docket serve: a bundle
// judged under the keys a verifier trusts, and a store's every project checked where it
// lies (docs/provability.md).

// KeySource says which keys a bundle was checked with (docs/cli.md, docs/provability.md).
type KeySource string

const (
	KeysFile         KeySource = "keys-file"    // the JWK set --keys names
	KeysInstallation KeySource = "installation" // the signing keys of the data dir at hand
	KeysOwn          KeySource = "own"          // only the keys the bundle carries: it proves nothing about who made it
)

// Trust is the keys a bundle is judged under: Keys, nil for the bundle's own; Source,
// which they are; and Said, how a sentence names them ("a key of keys.json").
type Trust struct {
	Keys   []signing.PublicKey
	Source KeySource
	Said   string
}

// Verdict is what docket events verify BUNDLE -o json prints.
type Verdict struct {
	Bundle    string    `json:"bundle"`
	OK        bool      `json:"ok"`      // the bundle holds together under the keys it was checked with
	Trusted   bool      `json:"trusted"` // and those keys are ones the verifier trusts, not only the bundle's own
	Keys      KeySource `json:"keys"`    // keys-file, installation or own
	ErrorCode string    `json:"errorCode,omitempty"`
	Message   string    `json:"message,omitempty"`
	Project   string    `json:"project,omitempty"`
	Events    int64     `json:"events,omitempty"`
	Head      string    `json:"head,omitempty"`
	SignedSeq int64     `json:"signedSeq,omitempty"`
	Releases  int       `json:"releases,omitempty"`
	KeyID     string    `json:"kid,omitempty"`
	Line      int       `json:"line,omitempty"` // where a bundle that does not hold breaks
	Seq       int64     `json:"seq,omitempty"`
}

// Judge verifies the bundle b, read from path, under trust and against held. The
// verdict is whole whenever err is nil; refusal is nil for a bundle that holds under
// trusted keys, [contract.CodeEventChainBroken] for one that does not hold, and
// [contract.CodeBundleUntrusted] for one that holds only under the keys it carries:
// anyone can edit a bundle and sign it again with a key of their own. err is a failure
// to judge at all.
func Judge(path string, b []byte, trust Trust, held []signing.Checkpoint) (v Verdict, refusal *contract.Error, err error) {
	v = Verdict{Bundle: path, Keys: trust.Source}
	rep, err := Verify(b, trust.Keys, held...)
	if be, ok := errors.AsType[*Error](err); ok {
		refusal = &contract.Error{Code: contract.CodeEventChainBroken,
			Teaching: fmt.Sprintf("%s: %v; the bundle was changed after it was exported, or no key %s trusts signed it", path, be, trust.Said)}
		v.ErrorCode, v.Message, v.Line, v.Seq = string(refusal.Code), refusal.Teaching, be.Line, be.Seq
		return v, refusal, nil
	}
	if err != nil {
		return Verdict{}, nil, err
	}
	v.OK, v.Trusted = true, trust.Source != KeysOwn
	v.Project, v.Events, v.Head, v.SignedSeq, v.Releases, v.KeyID = rep.Project, rep.Events, rep.Head, rep.SignedSeq, rep.Releases, rep.KeyID
	if !v.Trusted {
		refusal = &contract.Error{Code: contract.CodeBundleUntrusted, Teaching: fmt.Sprintf(
			"%s holds together only under the keys it carries (signed by %s), which proves it whole, not who made it: anyone can edit a bundle and sign it again with a key of their own; verify it with --keys and the installation's public keys (docket key public, or /.well-known/jwks.json on its serve), or with --data-dir on the installation's host", path, rep.KeyID)}
		v.ErrorCode, v.Message = string(refusal.Code), refusal.Teaching
	}
	return v, refusal, nil
}

// StoreReport is what [CheckStore] found: whether the store's own integrity check ran,
// the projects whose logs hold, and a sentence for each that does not.
type StoreReport struct {
	IntegrityChecked bool
	Held             []contract.ChainReport
	Broken           []string
}

// CheckStore checks every project of st where it lies, with no docket serve: the store's
// own integrity check first when it has one (SQLite's integrity_check: damage outside the
// events is not the chain's to see), then each project's log under keys, and each held
// checkpoint against its project. A failed integrity check is a
// [contract.CodeEventChainBroken] error; a held checkpoint of no project in st is a
// broken sentence.
func CheckStore(ctx context.Context, st store.Store, keys []signing.PublicKey, held []signing.Checkpoint) (StoreReport, error) {
	var sr StoreReport
	if ic, ok := st.(interface{ IntegrityCheck(context.Context) error }); ok {
		if err := ic.IntegrityCheck(ctx); err != nil {
			return sr, &contract.Error{Code: contract.CodeEventChainBroken, Err: err,
				Teaching: fmt.Sprintf("the store's own integrity check failed (%v); restore it from a backup", err)}
		}
		sr.IntegrityChecked = true
	}
	ps, err := st.Projects(ctx)
	if err != nil {
		return sr, err
	}
	matched := len(held) == 0
	for _, p := range ps {
		rep, err := boards.VerifyLog(ctx, st, contract.ProjectID(p.ID), keys)
		if err != nil {
			return sr, err
		}
		for _, cp := range held {
			if cp.Project != p.ID || !rep.OK {
				continue
			}
			matched = true
			err := boards.CheckHeld(ctx, st, contract.ProjectID(p.ID), cp, keys)
			if ce, ok := errors.AsType[*boards.CheckpointError](err); ok {
				rep.OK, rep.Broken = false, &contract.BrokenLink{Seq: ce.Seq, Field: "checkpoint", Want: ce.Want, Got: ce.Got}
			} else if err != nil {
				return sr, err
			}
		}
		if rep.OK {
			sr.Held = append(sr.Held, rep)
			continue
		}
		sr.Broken = append(sr.Broken, BrokenSentence(rep))
	}
	if !matched && len(sr.Broken) == 0 {
		sr.Broken = append(sr.Broken, fmt.Sprintf("the held checkpoint is of project %s, which the store does not hold", held[0].Project))
	}
	return sr, nil
}

// BrokenSentence says where rep's log stops holding; rep.Broken must be set.
func BrokenSentence(rep contract.ChainReport) string {
	b := rep.Broken
	if b.Node != "" {
		return fmt.Sprintf("project %s: %s (recorded at event %d): %s is %s, the log says %s; the store was changed behind the log", rep.Project, b.Node, b.Seq, b.Field, b.Got, b.Want)
	}
	if b.Field == "checkpoint" {
		return fmt.Sprintf("project %s: the signed checkpoint at event %d does not hold: %s, want %s; the log was rewritten", rep.Project, b.Seq, b.Got, b.Want)
	}
	return fmt.Sprintf("project %s: event %d: %s is %s, want %s; events after %d cannot be trusted", rep.Project, b.Seq, b.Field, b.Got, b.Want, rep.Seq)
}

// BrokenError is the refusal of a store check that found broken projects, nil when none.
func (sr StoreReport) BrokenError() *contract.Error {
	if len(sr.Broken) == 0 {
		return nil
	}
	return &contract.Error{Code: contract.CodeEventChainBroken, Teaching: strings.Join(sr.Broken, "; ")}
}

// ReadKeys reads a JWK set of public keys from path.
func ReadKeys(path string) ([]signing.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read keys: %w", err)
	}
	var set signing.JWKSet
	if err := contract.DecodeStrict(b, &set); err != nil {
		return nil, fmt.Errorf("read keys %s: %w", path, err)
	}
	return set.PublicKeys()
}

// ReadCheckpoint reads a checkpoint kept outside the log; none when path is empty.
func ReadCheckpoint(path string) ([]signing.Checkpoint, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	var cp signing.Checkpoint
	if err := contract.DecodeStrict(b, &cp); err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	return []signing.Checkpoint{cp}, nil
}
