package main

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strings"

	"github.com/docketrun/docket/internal/workbench"
)

// openCmd prints the URL of the docket start running on this data dir again, run key
// included, and opens it in a browser when there is one: for a person who closed the
// browser or lost the line docket start printed.
type openCmd struct {
	NoBrowser bool `name:"no-browser" help:"Only print the URL; open no browser."`
}

func (c *openCmd) Help() string {
	return `Prints the URL docket start printed, with its run key, and opens it in a browser: the one
BROWSER names, else xdg-open where there is a display (open on macOS). The browser is given a
page in the data dir (mode 0600) that goes on to the URL, never the key in its arguments.

Exit status 1 when no docket start runs on this data dir.

Examples:
  docket open                  print the URL and open it in the browser
  docket open --no-browser     print it only (over ssh, or to paste it elsewhere)`
}

func (c *openCmd) Run(ctx context.Context, e *env) error {
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	u, err := workbench.URL(dir)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(e.Stdout, "docket start: open %s\n", u); err != nil {
		return err
	}
	if c.NoBrowser {
		return nil
	}
	prog := browserCommand(e)
	if prog == nil {
		_, err := fmt.Fprintln(e.Stdout, "no browser found here (set BROWSER to one); open the URL above in yours")
		return err
	}
	page, err := workbench.WriteOpenPage(dir, u)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, prog[0], append(prog[1:], "file://"+page)...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("open a browser with %s (set BROWSER to another, or open the URL above): %w", prog[0], err)
	}
	// The browser, or the opener that hands the page to it, outlives this command.
	return cmd.Process.Release()
}

// browserCommand is the program that opens a page in the person's browser: BROWSER's first
// entry, else the system's opener where a browser can show (a display on Unix); nil when
// there is none.
func browserCommand(e *env) []string {
	if b, _, _ := strings.Cut(e.Getenv("BROWSER"), ":"); strings.TrimSpace(b) != "" {
		return strings.Fields(b)
	}
	switch runtime.GOOS {
	case "darwin":
		return []string{"open"}
	case "windows":
		return nil
	}
	if e.Getenv("DISPLAY") == "" && e.Getenv("WAYLAND_DISPLAY") == "" {
		return nil
	}
	if p, err := exec.LookPath("xdg-open"); err == nil {
		return []string{p}
	}
	return nil
}
