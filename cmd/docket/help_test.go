package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestHelp_EveryCommandHasExamples: a new user's --help on any command ends with
// examples, from the command's own Help or from the examples table.
func TestHelp_EveryCommandHasExamples(t *testing.T) {
	parser, err := kong.New(&cli{}, kong.Name("docket"))
	if err != nil {
		t.Fatal(err)
	}
	var paths [][]string
	var walk func(n *kong.Node, path []string)
	walk = func(n *kong.Node, path []string) {
		paths = append(paths, path)
		for _, ch := range n.Children {
			walk(ch, append(append([]string{}, path...), ch.Name))
		}
	}
	walk(parser.Model.Node, nil)
	if len(paths) < 40 {
		t.Fatalf("found %d commands; the walk misses some", len(paths))
	}
	for _, p := range paths {
		name := strings.Join(append([]string{"docket"}, p...), " ")
		t.Run(name, func(t *testing.T) {
			var out, errw bytes.Buffer
			e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw, Getenv: func(string) string { return "" }}
			if err := run(t.Context(), append(append([]string{}, p...), "--help"), e); err != nil {
				t.Fatalf("%s --help: %v (%s)", name, err, errw.String())
			}
			if !strings.Contains(out.String(), "Examples:") {
				t.Errorf("%s --help has no examples:\n%s", name, out.String())
			}
		})
	}
}
