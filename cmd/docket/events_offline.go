package main

import (
	"context"
	"errors"
	"fmt"
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

// verifyBundle checks the bundle at path, under the JWK set at keysPath when given and
// against the checkpoint at heldPath when given.
func verifyBundle(e *env, path, keysPath, heldPath string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read bundle: %w", err)
	}
	var keys []signing.PublicKey
	if keysPath != "" {
		if keys, err = readJWKS(keysPath); err != nil {
			return err
		}
	}
	held, err := readHeld(heldPath)
	if err != nil {
		return err
	}
	rep, err := bundle.Verify(b, keys, held...)
	if _, ok := errors.AsType[*bundle.Error](err); ok {
		return &exitError{code: exitFailure, err: &contract.Error{Code: contract.CodeEventChainBroken,
			Teaching: fmt.Sprintf("%s: %v; the bundle was changed after it was exported", path, err)}}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "%s: project %s, %d events, chain ok, head %s; signed up to seq %d; %d releases; bundle signed by %s\n",
		path, rep.Project, rep.Events, rep.Head, rep.SignedSeq, rep.Releases, rep.KeyID)
	if rep.OwnKeys {
		fmt.Fprintln(e.Stdout, "checked with the keys the bundle carries: pass --keys with the installation's published JWK set to know who signed it")
	}
	return nil
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
