package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/postgres"
	"github.com/docketrun/docket/internal/store/sqlite"
)

// initCmd creates a data dir: the installation key, the store, the first member and the
// default project, and saves a CLI token for the admin verbs.
type initCmd struct {
	Member         string `help:"Name of the first member." default:"admin"`
	PassphraseFile string `help:"File holding the member's passphrase (else DOCKET_PASSPHRASE, else a prompt)." type:"path"`
	Project        string `help:"Id of the first project." default:"default"`
	DB             string `name:"db" help:"Store: a SQLite path or postgres://… (default $DOCKET_HOME/docket.db)."`
	Output         string `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
}

func (c *initCmd) Run(ctx context.Context, e *env) error {
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("restrict data dir: %w", err)
	}
	keyPath := filepath.Join(dir, keyFile)
	if _, err := os.Stat(keyPath); err == nil {
		return fmt.Errorf("%s is already initialized (it holds %s); use another DOCKET_HOME to start over", dir, keyFile)
	}
	pass, err := choosePassphrase(ctx, e, c.PassphraseFile, "DOCKET_PASSPHRASE", c.Member)
	if err != nil {
		return err
	}
	key, err := identity.NewKey(rand.Reader)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, dir, c.DB)
	if err != nil {
		return err
	}
	defer st.Close()
	a, err := authority.New(authority.Config{Store: st, Key: key})
	if err != nil {
		return err
	}
	b, err := a.Directory().Init(ctx, c.Member, pass, contract.ProjectID(c.Project))
	if err != nil {
		return err
	}
	// The key is written only once the store accepted the member, so a refused init
	// leaves no key behind to block the next attempt.
	if err := identity.WriteKeyFile(keyPath, key); err != nil {
		return err
	}
	signer, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		return err
	}
	if err := signer.Save(filepath.Join(dir, signing.FileName)); err != nil {
		return err
	}
	tokPath := filepath.Join(dir, tokenFile)
	if err := writePrivate(tokPath, []byte(b.Token.String()+"\n")); err != nil {
		return err
	}
	if c.Output == "json" {
		return printJSON(e.Stdout, struct {
			DataDir   string           `json:"dataDir"`
			Member    contract.Member  `json:"member"`
			Project   contract.Project `json:"project"`
			Token     string           `json:"token"`
			TokenFile string           `json:"tokenFile"`
			Expires   time.Time        `json:"expiresAt"`
		}{dir, b.Member, b.Project, b.Token.String(), tokPath, b.Expires})
	}
	// Text output never shows the token (a terminal's scrollback is no place for it):
	// -o json, for scripts that keep it themselves, is the one place it is printed.
	fmt.Fprintf(e.Stdout, "initialized %s\nmember %s (%s), project %s\n", dir, b.Member.Name, b.Member.ID, b.Project.ID)
	fmt.Fprintf(e.Stdout, "CLI session saved to %s (mode 0600), until %s; docket login makes a new one\n", tokPath, b.Expires.Format(time.DateOnly))
	return nil
}

// maxPassphraseTries is how many times a person is asked to choose the first passphrase.
const maxPassphraseTries = 5

// choosePassphrase is the first member's passphrase. From a file or envVar it is taken as
// it is; typed, it is asked for twice, and asked for again when it is too short or the two
// differ, so that a typo neither aborts docket init (or docket start) nor locks the person
// out.
func choosePassphrase(ctx context.Context, e *env, file, envVar, member string) (string, error) {
	if file != "" || e.Getenv(envVar) != "" {
		return readPassphrase(ctx, e, file, envVar, "passphrase for "+member)
	}
	for range maxPassphraseTries {
		p, err := readPassphrase(ctx, e, "", envVar, fmt.Sprintf("choose a passphrase for %s (at least %d characters)", member, contract.MinPassphrase))
		if err != nil {
			return "", err
		}
		if n := len(p); n < contract.MinPassphrase {
			fmt.Fprintf(e.Stderr, "that passphrase has %d characters; it needs at least %d. Choose a longer one.\n", n, contract.MinPassphrase)
			continue
		}
		again, err := readPassphrase(ctx, e, "", envVar, "type it again")
		if err != nil {
			return "", err
		}
		if again != p {
			fmt.Fprintln(e.Stderr, "the two passphrases differ; choose it again.")
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("no passphrase was chosen in %d tries; run the command again, or give it with --passphrase-file or %s", maxPassphraseTries, envVar)
}

// openStore opens the store named by db: a postgres:// URL or a SQLite path, by default
// docket.db in the data dir.
func openStore(ctx context.Context, dir, db string) (store.Store, error) {
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		st, err := postgres.Open(ctx, db)
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		return st, nil
	}
	if db == "" {
		db = filepath.Join(dir, dbFile)
	}
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", db, err)
	}
	if err := os.Chmod(db, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
		st.Close()
		return nil, fmt.Errorf("restrict store %s: %w", db, err)
	}
	return st, nil
}
