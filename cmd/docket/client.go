package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
)

// Files of the data dir.
const (
	keyFile   = datadir.KeyFile
	dbFile    = datadir.DBFile
	tokenFile = datadir.TokenFile
	urlFile   = datadir.URLFile
)

// dataDir returns $DOCKET_HOME, or ~/.docket.
func dataDir(e *env) (string, error) { return datadir.Dir(e.Getenv) }

// clientFlags are the flags every admin verb shares.
type clientFlags struct {
	Project string `help:"Project to act on." default:"default" env:"DOCKET_PROJECT"`
	Output  string `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
}

func (f clientFlags) json() bool { return f.Output == "json" }

// client is the admin verbs' client of /api/v1: an [apiclient.Client] whose refusal of
// the credential ends the process with exit 3.
type client struct{ api *apiclient.Client }

// newClient finds the server and token: DOCKET_URL and DOCKET_TOKEN, else the url and
// token files of the data dir.
func newClient(e *env) (*client, error) {
	dir, err := dataDir(e)
	if err != nil {
		return nil, err
	}
	if e.Getenv(datadir.URLEnv) == "" {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no data dir at %s: run docket init to create one (or docket start, which also runs serve and a worker), or set DOCKET_HOME to yours", dir)
		}
	}
	base, err := serverURL(e, dir)
	if err != nil {
		return nil, fmt.Errorf("%w (data dir %s; docket start or docket serve writes the server's URL there)", err, dir)
	}
	tok := e.Getenv("DOCKET_TOKEN")
	if tok == "" {
		b, err := os.ReadFile(filepath.Join(dir, tokenFile))
		if err != nil {
			return nil, &exitError{code: exitCredential, err: fmt.Errorf("no credential: set DOCKET_TOKEN or run docket init (%w)", err)}
		}
		tok = strings.TrimSpace(string(b))
	}
	trust, err := clientTrust(e, dir, "")
	if err != nil {
		return nil, err
	}
	return &client{api: &apiclient.Client{URL: base, Token: tok, HTTP: trust.Client(), Reason: e.Getenv("DOCKET_REASON")}}, nil
}

// serverURL returns DOCKET_URL, else the URL docket serve wrote into the data dir.
func serverURL(e *env, dir string) (string, error) { return datadir.ServerURL(e.Getenv, dir) }

// do sends a request and decodes a 2xx answer into out (when not nil). An error answer
// is the *contract.Error the server sent; a rejected credential exits 3.
func (c *client) do(ctx context.Context, method, path string, in, out any) error {
	return credential(c.api.Do(ctx, method, path, in, out))
}

// list returns every item of the list route at path, page by page (apiclient.All).
func list[T any](ctx context.Context, cl *client, path string) ([]T, error) {
	items, err := apiclient.All[T](ctx, cl.api, path)
	return items, credential(err)
}

// credential makes the server's refusal of the credential exit 3.
func credential(err error) error {
	if re, ok := errors.AsType[*apiclient.ResponseError](err); ok && re.StatusCode == http.StatusUnauthorized && re.Err != nil {
		return &exitError{code: exitCredential, err: re}
	}
	return err
}

// projectPath returns /api/v1/projects/<project>/<rest…>, escaping each part.
func projectPath(project string, rest ...string) string {
	return apiclient.ProjectPath(project, rest...)
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writePrivate writes b to path with mode 0600, atomically.
func writePrivate(path string, b []byte) error { return datadir.WritePrivate(path, b) }

// readSecret reads a secret from the file named by flag, else from the environment
// variable, else from the first line of stdin; secrets never come from flags, which any process can read.
func readSecret(e *env, file, envVar, what string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", what, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	if v := e.Getenv(envVar); v != "" {
		return v, nil
	}
	fmt.Fprintf(e.Stderr, "%s: ", what)
	line, err := readLine(e.Stdin)
	if err != nil {
		return "", fmt.Errorf("read %s from stdin (or set %s): %w", what, envVar, err)
	}
	return line, nil
}

func readLine(r io.Reader) (string, error) {
	var b []byte
	one := make([]byte, 1)
	for len(b) < 4096 {
		n, err := r.Read(one)
		if n == 1 {
			if one[0] == '\n' {
				break
			}
			b = append(b, one[0])
		}
		if err == io.EOF && len(b) > 0 {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return strings.TrimRight(string(b), "\r"), nil
}

// waitHealthy polls the server's health until it answers or ctx ends; docket serve may
// still be starting when a script's next command runs.
func waitHealthy(ctx context.Context, e *env, dir string, within time.Duration) (contract.Health, string, error) {
	trust, err := clientTrust(e, dir, "")
	if err != nil {
		return contract.Health{}, "", err
	}
	return apiclient.WaitHealthy(ctx, within, trust.Explain(trust.Transport()), func() (string, error) { return serverURL(e, dir) })
}
