package workbench

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/supervisor"
)

// stopPoll is how often [Stop] looks whether docket start has exited.
const stopPoll = 50 * time.Millisecond

// claimPidFile writes this process's pid to path, refusing when a live docket start
// already holds it, and returns the function that removes it.
func claimPidFile(path string) (func(), error) {
	if pid, err := readPidFile(path); err == nil && supervisor.Alive(pid) {
		return nil, fmt.Errorf("docket start is already running here (pid %d); stop it with docket stop", pid)
	}
	if err := datadir.WritePrivate(path, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
		return nil, err
	}
	return func() { os.Remove(path) }, nil
}

func readPidFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s holds no pid", path)
	}
	return pid, nil
}

// Stop stops the docket start running on the data dir dir: it signals the pid in its
// pid file and waits up to wait for it to stop its children and exit, saying on w what
// it found.
func Stop(ctx context.Context, dir string, wait time.Duration, w io.Writer) error {
	path := filepath.Join(dir, PidFile)
	pid, err := readPidFile(path)
	if errors.Is(err, os.ErrNotExist) || err == nil && !supervisor.Alive(pid) {
		// A pid file whose process is gone is stale; removing it is tidying, and a file
		// that is already gone is what we want.
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return fmt.Errorf("remove the stale %s: %w", path, rerr)
		}
		_, err := fmt.Fprintf(w, "docket start is not running on %s\n", dir)
		return err
	}
	if err != nil {
		return err
	}
	if err := supervisor.Terminate(pid); err != nil {
		return fmt.Errorf("stop docket start (pid %d): %w", pid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(stopPoll)
	defer tick.Stop()
	for supervisor.Alive(pid) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("docket start (pid %d) did not exit within %s; see %s", pid, wait, filepath.Join(dir, datadir.LogsDir))
		case <-tick.C:
		}
	}
	_, err = fmt.Fprintf(w, "docket start (pid %d) stopped\n", pid)
	return err
}

// OpenPage is the file docket open writes (mode 0600) and hands the browser: a page that
// goes on to the workbench URL, so that the run key is never in a program's arguments,
// which any process on the machine can read.
const OpenPage = "open.html"

// URL returns the workbench URL, run key included, of the docket start running on the
// data dir dir, as it printed it; an error says when none runs there.
func URL(dir string) (string, error) {
	pid, err := readPidFile(filepath.Join(dir, PidFile))
	if errors.Is(err, os.ErrNotExist) || err == nil && !supervisor.Alive(pid) {
		return "", fmt.Errorf("docket start is not running on %s; run docket start, which prints the URL", dir)
	}
	if err != nil {
		return "", err
	}
	st, err := loadState(dir)
	if err != nil {
		return "", err
	}
	if st.Listen == "" || st.RunKey == "" {
		return "", fmt.Errorf("docket start on %s has not chosen its address yet; wait until it prints its URL", dir)
	}
	return "http://" + st.Listen + "/?key=" + st.RunKey, nil
}

// WriteOpenPage writes OpenPage into the data dir dir, a page that goes on to url, and
// returns its path.
func WriteOpenPage(dir, url string) (string, error) {
	esc := html.EscapeString(url)
	page := `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=` + esc +
		`"><title>Docket</title></head><body><p><a href="` + esc + `">Open the Docket console</a></p></body></html>` + "\n"
	path := filepath.Join(dir, OpenPage)
	if err := datadir.WritePrivate(path, []byte(page)); err != nil {
		return "", err
	}
	return path, nil
}
