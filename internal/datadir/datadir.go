// Package datadir provides the layout of a Docket data dir: where it is, the files in
// it, and how a private file is written there.
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Files of the data dir. The data dir and the directories in it are 0700 and every file
// is 0600: the key and the tokens in it are the installation's authority.
const (
	KeyFile   = "key"       // the installation key
	DBFile    = "docket.db" // the default SQLite store
	TokenFile = "token"     // the CLI's member session token, written by docket init
	URLFile   = "url"       // the URL of the running docket serve, written when it listens
	LogsDir   = "logs"      // one log per supervised child: serve.log, worker.log
)

// HomeEnv names the data dir; without it the data dir is ~/.docket.
const HomeEnv = "DOCKET_HOME"

// Dir returns the data dir: $DOCKET_HOME as getenv reads it, else ~/.docket.
func Dir(getenv func(string) string) (string, error) {
	if d := getenv(HomeEnv); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the data dir: set DOCKET_HOME: %w", err)
	}
	return filepath.Join(home, ".docket"), nil
}

// WritePrivate writes b to path with mode 0600, atomically, so that a reader never sees
// half a file.
func WritePrivate(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ServeKeyEnv carries, from docket start to its docket serve, the key serve's every
// path must begin with (/k/<key>); serve then writes its URL with it into the url file.
const ServeKeyEnv = "DOCKET_SERVE_KEY"

// URLEnv names the running docket serve; without it the data dir's url file does.
const URLEnv = "DOCKET_URL"

// ServerURL returns $DOCKET_URL as getenv reads it, else the URL docket serve wrote into
// the data dir dir.
func ServerURL(getenv func(string) string, dir string) (string, error) {
	if u := getenv(URLEnv); u != "" {
		return strings.TrimRight(u, "/"), nil
	}
	b, err := os.ReadFile(filepath.Join(dir, URLFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", errors.New("no server: start docket serve or set DOCKET_URL")
	}
	if err != nil {
		return "", fmt.Errorf("read server url: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
