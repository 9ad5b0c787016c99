package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// isTerminal reports whether w is a terminal, where lists get a header and aligned
// columns; anything else (a pipe, a file, a test) gets tab-separated lines to parse.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// writeList writes rows of tab-separated fields to e.Stdout: under header, aligned, on a
// terminal; as they are elsewhere. With no rows it says so on e.Stderr with empty, a
// sentence that also says how to get some, so an empty list never looks like a failure.
func writeList(e *env, header []string, rows [][]string, empty string) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(e.Stderr, empty)
		return err
	}
	if !isTerminal(e.Stdout) {
		for _, r := range rows {
			if _, err := fmt.Fprintln(e.Stdout, strings.Join(r, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(header, "\t")))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}
