package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/bundle"
	"github.com/docketrun/docket/internal/authority/identity"
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
	key, err := identity.ReadKeyFile(filepath.Join(dir, keyFile))
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

// trustedKeys returns the keys a bundle is judged under: the JWK set at keysPath when
// given, else the signing keys of the data dir (dir, or the one DOCKET_HOME or the home
// directory names) when it holds them, else none (the bundle's own keys, which prove it
// whole but not who made it).
func trustedKeys(e *env, keysPath, dir string) (bundle.Trust, error) {
	if keysPath != "" {
		keys, err := bundle.ReadKeys(keysPath)
		return bundle.Trust{Keys: keys, Source: bundle.KeysFile, Said: "a key of " + keysPath}, err
	}
	own := bundle.Trust{Source: bundle.KeysOwn, Said: "only a key the bundle carries itself"}
	said := "a key of the installation in " + dir
	named := dir != ""
	if !named {
		d, err := dataDir(e)
		if err != nil {
			return own, nil // no data dir at hand: nothing of the installation to trust
		}
		dir, said = d, "a key of the installation in the data dir"
	}
	path := filepath.Join(dir, signing.FileName)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !named {
		return own, nil
	}
	k, err := signing.Load(path)
	if err != nil {
		return bundle.Trust{}, fmt.Errorf("read the installation's signing keys: %w", err)
	}
	return bundle.Trust{Keys: k.Public(), Source: bundle.KeysInstallation, Said: said}, nil
}

// verifyBundle judges the bundle at path under the keys [trustedKeys] finds and, when
// heldPath is given, against the checkpoint kept there. A bundle that holds only under
// the keys it carries exits [exitUntrusted].
func verifyBundle(e *env, path, keysPath, dir, heldPath string, asJSON bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read bundle: %w", err)
	}
	trust, err := trustedKeys(e, keysPath, dir)
	if err != nil {
		return err
	}
	held, err := bundle.ReadCheckpoint(heldPath)
	if err != nil {
		return err
	}
	v, refusal, err := bundle.Judge(path, b, trust, held)
	if err != nil {
		return err
	}
	if asJSON {
		if err := printJSON(e.Stdout, v); err != nil {
			return err
		}
	} else if v.OK {
		if _, err := fmt.Fprintf(e.Stdout, "%s: project %s, %d events, chain ok, head %s; signed up to seq %d; %d releases; bundle signed by %s, %s\n",
			path, v.Project, v.Events, v.Head, v.SignedSeq, v.Releases, v.KeyID, trust.Said); err != nil {
			return err
		}
	}
	switch {
	case refusal == nil:
		return nil
	case v.OK:
		return &exitError{code: exitUntrusted, err: refusal}
	}
	return &exitError{code: exitFailure, err: refusal}
}

// verifyDataDir checks every project of the store in the data dir, with no docket serve,
// and its project against the checkpoint at heldPath when given.
func verifyDataDir(ctx context.Context, e *env, dir, db, keysPath, heldPath string) error {
	held, err := bundle.ReadCheckpoint(heldPath)
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
		keys, err = bundle.ReadKeys(keysPath)
	} else {
		var k *signing.Keyring
		if k, err = signing.Load(filepath.Join(dir, signing.FileName)); err == nil {
			keys = k.Public()
		}
	}
	if err != nil {
		return err
	}
	sr, err := bundle.CheckStore(ctx, st, keys, held)
	if ce, ok := errors.AsType[*contract.Error](err); ok && ce.Code == contract.CodeEventChainBroken {
		return &exitError{code: exitFailure, err: ce}
	} else if err != nil {
		return err
	}
	if sr.IntegrityChecked {
		fmt.Fprintln(e.Stdout, "store integrity ok")
	}
	for _, rep := range sr.Held {
		fmt.Fprintf(e.Stdout, "project %s: %d events, chain ok, head %s, signed up to seq %d, board ok\n", rep.Project, rep.Seq, rep.Hash, rep.SignedSeq)
	}
	if ce := sr.BrokenError(); ce != nil {
		return &exitError{code: exitFailure, err: ce}
	}
	return nil
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
