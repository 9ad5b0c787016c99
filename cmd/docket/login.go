package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/certs"
	"github.com/docketrun/docket/internal/contract"
)

// loginCmd opens a member session on the running server and saves its token where the
// admin verbs look for it, so that a second person can use the CLI as themselves.
type loginCmd struct {
	Member         string `help:"Name of the member to log in as." required:""`
	PassphraseFile string `help:"File holding the member's passphrase (else DOCKET_PASSPHRASE, else a prompt that does not echo)." type:"path"`
	Output         string `short:"o" help:"Output format: text or json; only json prints the session token." enum:"text,json" default:"text"`
	URL            string `help:"The serve to log in to, such as https://docket.example.com:7420 from another machine; saved in the data dir for the other verbs (default $DOCKET_URL, else the url file docket serve writes)."`
	CA             string `name:"ca" help:"The CA file that signed serve's certificate (docket cert's ca.pem); saved in the data dir for the other verbs (default $DOCKET_CA, else the data dir's tls/ca.pem, else the system's roots)." type:"existingfile"`
}

func (c *loginCmd) Run(ctx context.Context, e *env) error {
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	base := strings.TrimRight(c.URL, "/")
	if base == "" {
		if base, err = serverURL(e, dir); err != nil {
			return err
		}
	}
	trust, err := clientTrust(e, dir, c.CA)
	if err != nil {
		return err
	}
	pass, err := readPassphrase(ctx, e, c.PassphraseFile, "DOCKET_PASSPHRASE", "passphrase for "+c.Member)
	if err != nil {
		return err
	}
	// No bearer token: a login is how one gets a credential, and a stale DOCKET_TOKEN
	// must not make the server refuse it.
	cl := &client{api: &apiclient.Client{URL: base, HTTP: trust.Client()}}
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
	if err := c.remember(e, dir, base); err != nil {
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

// remember saves --url and --ca in the data dir, where the other verbs look for them:
// the URL in the url file (docket serve's, when it runs here), the CA as tls/ca.pem.
func (c *loginCmd) remember(e *env, dir, base string) error {
	if c.URL != "" {
		if err := writePrivate(filepath.Join(dir, urlFile), []byte(base+"\n")); err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "serve's URL saved to %s\n", filepath.Join(dir, urlFile))
	}
	if c.CA == "" {
		return nil
	}
	dst := filepath.Join(dir, tlsDir, certs.CAFile)
	if same, err := sameFile(c.CA, dst); err != nil || same {
		return err
	}
	b, err := os.ReadFile(c.CA)
	if err != nil {
		return fmt.Errorf("read the CA file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(dst), err)
	}
	if err := writePrivate(dst, b); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.Stdout, "CA saved to %s\n", dst)
	return err
}

// sameFile reports whether a and b are one file; a missing b is not a.
func sameFile(a, b string) (bool, error) {
	fb, err := os.Stat(b)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
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
