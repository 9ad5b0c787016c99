package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/bundle"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// The events verbs that read the data dir's store directly, with no docket serve: the
// export, the offline verifications and the on-demand checkpoint (docs/provability.md).

type eventsExportCmd struct {
	Project string `help:"Project to export." default:"default" env:"DOCKET_PROJECT"`
	Out     string `help:"File to write the bundle to (default PROJECT.bundle)." type:"path"`
	DB      string `name:"db" help:"Store: a SQLite path or postgres://… (default $DOCKET_HOME/docket.db)."`
}

func (c *eventsExportCmd) Run(ctx context.Context, e *env) error {
	st, _, keys, err := openSigning(ctx, e, c.DB)
	if err != nil {
		return err
	}
	defer st.Close()
	b, err := bundle.Export(ctx, st, contract.ProjectID(c.Project), keys, time.Now())
	if err != nil {
		return err
	}
	out := c.Out
	if out == "" {
		out = c.Project + ".bundle"
	}
	if err := os.WriteFile(out, b, 0o600); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	_, err = fmt.Fprintf(e.Stdout, "wrote %s: project %s, %d bytes, signed by %s\n", out, c.Project, len(b), keys.KeyID())
	return err
}

type eventsCheckpointCmd struct {
	Project string `help:"Project whose head to sign." default:"default" env:"DOCKET_PROJECT"`
	DB      string `name:"db" help:"Store: a SQLite path or postgres://… (default $DOCKET_HOME/docket.db)."`
	Output  string `short:"o" help:"Output format: text or json (the checkpoint, to keep outside the log)." enum:"text,json" default:"text"`
}

func (c *eventsCheckpointCmd) Run(ctx context.Context, e *env) error {
	st, dir, keys, err := openSigning(ctx, e, c.DB)
	if err != nil {
		return err
	}
	defer st.Close()
	key, err := authority.ReadKeyFile(filepath.Join(dir, keyFile))
	if err != nil {
		return err
	}
	a, err := authority.New(authority.Config{Store: st, Key: key, Signer: keys})
	if err != nil {
		return err
	}
	cp, err := a.SignHead(ctx, contract.ProjectID(c.Project))
	if err != nil {
		return err
	}
	if c.Output == "json" {
		return printJSON(e.Stdout, cp)
	}
	_, err = fmt.Fprintf(e.Stdout, "project %s: head seq %d hash %s signed by %s\n", cp.Project, cp.Seq, cp.Hash, cp.KeyID)
	return err
}

// readHeld reads a checkpoint kept outside the log; none when path is empty.
func readHeld(path string) ([]signing.Checkpoint, error) {
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

// Which keys a bundle was checked with (docs/cli.md, docs/provability.md).
const (
	bundleKeysFile         = "keys-file"    // the JWK set --keys names
	bundleKeysInstallation = "installation" // the signing keys of the data dir at hand
	bundleKeysOwn          = "own"          // only the keys the bundle carries: it proves nothing about who made it
)

// bundleVerdict is what docket events verify BUNDLE -o json prints.
type bundleVerdict struct {
	Bundle    string `json:"bundle"`
	OK        bool   `json:"ok"`      // the bundle holds together under the keys it was checked with
	Trusted   bool   `json:"trusted"` // and those keys are ones the verifier trusts, not only the bundle's own
	Keys      string `json:"keys"`    // keys-file, installation or own
	ErrorCode string `json:"errorCode,omitempty"`
	Message   string `json:"message,omitempty"`
	Project   string `json:"project,omitempty"`
	Events    int64  `json:"events,omitempty"`
	Head      string `json:"head,omitempty"`
	SignedSeq int64  `json:"signedSeq,omitempty"`
	Releases  int    `json:"releases,omitempty"`
	KeyID     string `json:"kid,omitempty"`
	Line      int    `json:"line,omitempty"` // where a bundle that does not hold breaks
	Seq       int64  `json:"seq,omitempty"`
}

// trustedKeys returns the public keys a bundle is checked with and which they are: the JWK
// set at keysPath when given, else the signing keys of the data dir (dir, or the one
// DOCKET_HOME or the home directory names) when it holds them, else none (the bundle's
// own keys, which prove it whole but not who made it).
func trustedKeys(e *env, keysPath, dir string) ([]signing.PublicKey, string, error) {
	if keysPath != "" {
		keys, err := readJWKS(keysPath)
		return keys, bundleKeysFile, err
	}
	named := dir != ""
	if !named {
		d, err := dataDir(e)
		if err != nil {
			return nil, bundleKeysOwn, nil // no data dir at hand: nothing of the installation to trust
		}
		dir = d
	}
	path := filepath.Join(dir, signing.FileName)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !named {
		return nil, bundleKeysOwn, nil
	}
	k, err := signing.Load(path)
	if err != nil {
		return nil, "", fmt.Errorf("read the installation's signing keys: %w", err)
	}
	return k.Public(), bundleKeysInstallation, nil
}

// verifyBundle checks the bundle at path under the keys [trustedKeys] finds and, when
// heldPath is given, against the checkpoint kept there. A bundle that holds only under
// the keys it carries exits [exitUntrusted]: anyone can edit a bundle and sign it again
// with a key of their own.
func verifyBundle(e *env, path, keysPath, dir, heldPath string, asJSON bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read bundle: %w", err)
	}
	keys, source, err := trustedKeys(e, keysPath, dir)
	if err != nil {
		return err
	}
	held, err := readHeld(heldPath)
	if err != nil {
		return err
	}
	v := bundleVerdict{Bundle: path, Keys: source}
	rep, err := bundle.Verify(b, keys, held...)
	if be, ok := errors.AsType[*bundle.Error](err); ok {
		ce := &contract.Error{Code: contract.CodeEventChainBroken,
			Teaching: fmt.Sprintf("%s: %v; the bundle was changed after it was exported, or no key %s trusts signed it", path, be, bundleKeysSaid(source, keysPath, dir))}
		v.ErrorCode, v.Message, v.Line, v.Seq = string(ce.Code), ce.Teaching, be.Line, be.Seq
		if asJSON {
			if err := printJSON(e.Stdout, v); err != nil {
				return err
			}
		}
		return &exitError{code: exitFailure, err: ce}
	}
	if err != nil {
		return err
	}
	v.OK, v.Trusted = true, source != bundleKeysOwn
	v.Project, v.Events, v.Head, v.SignedSeq, v.Releases, v.KeyID = rep.Project, rep.Events, rep.Head, rep.SignedSeq, rep.Releases, rep.KeyID
	var untrusted *contract.Error
	if !v.Trusted {
		untrusted = &contract.Error{Code: contract.CodeBundleUntrusted, Teaching: fmt.Sprintf(
			"%s holds together only under the keys it carries (signed by %s), which proves it whole, not who made it: anyone can edit a bundle and sign it again with a key of their own; verify it with --keys and the installation's public keys (docket key public, or /.well-known/jwks.json on its serve), or with --data-dir on the installation's host", path, rep.KeyID)}
		v.ErrorCode, v.Message = string(untrusted.Code), untrusted.Teaching
	}
	if asJSON {
		if err := printJSON(e.Stdout, v); err != nil {
			return err
		}
	} else if _, err := fmt.Fprintf(e.Stdout, "%s: project %s, %d events, chain ok, head %s; signed up to seq %d; %d releases; bundle signed by %s, %s\n",
		path, rep.Project, rep.Events, rep.Head, rep.SignedSeq, rep.Releases, rep.KeyID, bundleKeysSaid(source, keysPath, dir)); err != nil {
		return err
	}
	if untrusted != nil {
		return &exitError{code: exitUntrusted, err: untrusted}
	}
	return nil
}

// bundleKeysSaid names the keys a bundle was checked with, for a sentence.
func bundleKeysSaid(source, keysPath, dir string) string {
	switch source {
	case bundleKeysFile:
		return "a key of " + keysPath
	case bundleKeysInstallation:
		if dir == "" {
			return "a key of the installation in the data dir"
		}
		return "a key of the installation in " + dir
	}
	return "only a key the bundle carries itself"
}

// verifyDataDir checks every project of the store in the data dir, with no docket serve,
// and its project against the checkpoint at heldPath when given.
func verifyDataDir(ctx context.Context, e *env, dir, db, keysPath, heldPath string) error {
	held, err := readHeld(heldPath)
	if err != nil {
		return err
	}
	e.Getenv = dataDirEnv(e.Getenv, dir)
	st, dir, err := openExisting(ctx, e, db)
	if err != nil {
		return err
	}
	defer st.Close()
	var keys []signing.PublicKey
	if keysPath != "" {
		keys, err = readJWKS(keysPath)
	} else {
		var k *signing.Keyring
		if k, err = signing.Load(filepath.Join(dir, signing.FileName)); err == nil {
			keys = k.Public()
		}
	}
	if err != nil {
		return err
	}
	// The store's own check first (SQLite's integrity_check): damage outside the events
	// is not the chain's to see.
	if ic, ok := st.(interface{ IntegrityCheck(context.Context) error }); ok {
		if err := ic.IntegrityCheck(ctx); err != nil {
			return &exitError{code: exitFailure, err: &contract.Error{Code: contract.CodeEventChainBroken, Err: err,
				Teaching: fmt.Sprintf("the store's own integrity check failed (%v); restore it from a backup", err)}}
		}
		fmt.Fprintln(e.Stdout, "store integrity ok")
	}
	ps, err := st.Projects(ctx)
	if err != nil {
		return err
	}
	var broken []string
	matched := len(held) == 0
	for _, p := range ps {
		rep, err := boards.VerifyLog(ctx, st, contract.ProjectID(p.ID), keys)
		if err != nil {
			return err
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
				return err
			}
		}
		if rep.OK {
			fmt.Fprintf(e.Stdout, "project %s: %d events, chain ok, head %s, signed up to seq %d, board ok\n", rep.Project, rep.Seq, rep.Hash, rep.SignedSeq)
			continue
		}
		broken = append(broken, brokenSentence(rep))
	}
	if !matched && len(broken) == 0 {
		broken = append(broken, fmt.Sprintf("the held checkpoint is of project %s, which the store does not hold", held[0].Project))
	}
	if len(broken) > 0 {
		return &exitError{code: exitFailure, err: &contract.Error{Code: contract.CodeEventChainBroken, Teaching: strings.Join(broken, "; ")}}
	}
	return nil
}

// brokenSentence says where rep's log stops holding.
func brokenSentence(rep contract.ChainReport) string {
	b := rep.Broken
	if b.Node != "" {
		return fmt.Sprintf("project %s: %s (recorded at event %d): %s is %s, the log says %s; the store was changed behind the log", rep.Project, b.Node, b.Seq, b.Field, b.Got, b.Want)
	}
	if b.Field == "checkpoint" {
		return fmt.Sprintf("project %s: the signed checkpoint at event %d does not hold: %s, want %s; the log was rewritten", rep.Project, b.Seq, b.Got, b.Want)
	}
	return fmt.Sprintf("project %s: event %d: %s is %s, want %s; events after %d cannot be trusted", rep.Project, b.Seq, b.Field, b.Got, b.Want, rep.Seq)
}

// readJWKS reads a JWK set of public keys.
func readJWKS(path string) ([]signing.PublicKey, error) {
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

// openSigning opens the data dir's store and reads its signing keys.
func openSigning(ctx context.Context, e *env, db string) (store.Store, string, *signing.Keyring, error) {
	st, dir, err := openExisting(ctx, e, db)
	if err != nil {
		return nil, "", nil, err
	}
	keys, err := signing.Load(filepath.Join(dir, signing.FileName))
	if err != nil {
		st.Close()
		return nil, "", nil, err
	}
	return st, dir, keys, nil
}

// openExisting opens the data dir's store, refusing to create one where there is none.
func openExisting(ctx context.Context, e *env, db string) (store.Store, string, error) {
	dir, err := dataDir(e)
	if err != nil {
		return nil, "", err
	}
	if db == "" {
		if _, err := os.Stat(filepath.Join(dir, dbFile)); err != nil {
			return nil, "", fmt.Errorf("no store in %s: %w", dir, err)
		}
	}
	st, err := openStore(ctx, dir, db)
	return st, dir, err
}

// dataDirEnv returns getenv with the data dir set to dir when dir is not empty.
func dataDirEnv(getenv func(string) string, dir string) func(string) string {
	if dir == "" {
		return getenv
	}
	return func(k string) string {
		if k == datadir.HomeEnv {
			return dir
		}
		return getenv(k)
	}
}
