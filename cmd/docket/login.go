package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/term"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

// loginCmd opens a member session on the running server and saves its token where the
// admin verbs look for it, so that a second person can use the CLI as themselves.
type loginCmd struct {
	Member         string `help:"Name of the member to log in as." required:""`
	PassphraseFile string `help:"File holding the member's passphrase (else DOCKET_PASSPHRASE, else a prompt that does not echo)." type:"path"`
	Output         string `short:"o" help:"Output format: text or json; only json prints the session token." enum:"text,json" default:"text"`
}

func (c *loginCmd) Run(ctx context.Context, e *env) error {
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	base, err := serverURL(e, dir)
	if err != nil {
		return err
	}
	pass, err := readPassphrase(ctx, e, c.PassphraseFile, "DOCKET_PASSPHRASE", "passphrase for "+c.Member)
	if err != nil {
		return err
	}
	// No bearer token: a login is how one gets a credential, and a stale DOCKET_TOKEN
	// must not make the server refuse it.
	cl := &client{api: &apiclient.Client{URL: base, HTTP: &http.Client{}}}
	var s contract.SessionCreated
	if err := cl.do(ctx, http.MethodPost, "/api/v1/sessions", contract.LoginRequest{Name: c.Member, Passphrase: pass}, &s); err != nil {
		return err
	}
	if s.Token == "" {
		return fmt.Errorf("login: the server at %s answered without a session token", apiclient.Origin(base))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	tokPath := filepath.Join(dir, tokenFile)
	if err := writePrivate(tokPath, []byte(s.Token+"\n")); err != nil {
		return err
	}
	if c.Output == "json" {
		// json is for scripts that hold the token themselves, so it is the one place
		// the token is printed; text output never shows it.
		return printJSON(e.Stdout, struct {
			Member    contract.Member `json:"member"`
			Token     string          `json:"token"`
			TokenFile string          `json:"tokenFile"`
			Expires   time.Time       `json:"expiresAt"`
		}{s.Member, s.Token, tokPath, s.ExpiresAt})
	}
	_, err = fmt.Fprintf(e.Stdout, "logged in as member %s (%s) until %s\nsession token saved to %s\n",
		s.Member.Name, s.Member.ID, s.ExpiresAt.Format(time.RFC3339), tokPath)
	return err
}

// logoutCmd ends the CLI's session on the server and forgets its token.
type logoutCmd struct{}

func (logoutCmd) Run(ctx context.Context, e *env) error {
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	if err := cl.do(ctx, http.MethodDelete, "/api/v1/sessions/current", nil, nil); err != nil {
		return err
	}
	// A token from DOCKET_TOKEN is the caller's to manage; only the saved one is removed.
	if e.Getenv("DOCKET_TOKEN") != "" {
		_, err = fmt.Fprintln(e.Stdout, "logged out (the session in DOCKET_TOKEN is revoked)")
		return err
	}
	tokPath := filepath.Join(dir, tokenFile)
	if err := os.Remove(tokPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", tokPath, err)
	}
	_, err = fmt.Fprintf(e.Stdout, "logged out; removed %s\n", tokPath)
	return err
}

// readPassphrase is readSecret for passphrases typed by a person: when the prompt reads
// a terminal, echo is off while the passphrase is typed and comes back on afterwards,
// even when Ctrl-C (which ends ctx) interrupts the read. Other stdins are read as lines.
func readPassphrase(ctx context.Context, e *env, file, envVar, what string) (string, error) {
	f, ok := e.Stdin.(*os.File)
	if file != "" || e.Getenv(envVar) != "" || !ok || !term.IsTerminal(int(f.Fd())) {
		return readSecret(e, file, envVar, what)
	}
	fd := int(f.Fd())
	saved, err := term.GetState(fd)
	if err != nil {
		return "", fmt.Errorf("read %s: terminal state: %w", what, err)
	}
	fmt.Fprintf(e.Stderr, "%s: ", what)
	type answer struct {
		b   []byte
		err error
	}
	done := make(chan answer, 1)
	go func() {
		b, err := term.ReadPassword(fd)
		done <- answer{b, err}
	}()
	select {
	case a := <-done:
		fmt.Fprintln(e.Stderr) // the user's Enter was not echoed
		if a.err != nil {
			return "", fmt.Errorf("read %s from the terminal (or set %s): %w", what, envVar, a.err)
		}
		return string(a.b), nil
	case <-ctx.Done():
		// The process is about to end with the reader still blocked; put echo back now
		// rather than leave the person's shell silent.
		if err := term.Restore(fd, saved); err != nil {
			return "", fmt.Errorf("restore terminal after interrupt: %w", err)
		}
		fmt.Fprintln(e.Stderr)
		return "", fmt.Errorf("read %s: interrupted: %w", what, ctx.Err())
	}
}
