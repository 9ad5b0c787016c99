package main

import (
	"bytes"
	"os"
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

// TestReadme_StartTellsOneStory: what docket start runs is said once, the same way, by
// docket start --help and by the README (serve, a worker and the Agents' runtimes).
func TestReadme_StartTellsOneStory(t *testing.T) {
	var out, errw bytes.Buffer
	e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw, Getenv: func(string) string { return "" }}
	if err := run(t.Context(), []string{"start", "--help"}, e); err != nil {
		t.Fatalf("start --help: %v (%s)", err, errw.String())
	}
	if !strings.Contains(out.String(), "one runtime per enabled Agent profile") {
		t.Errorf("docket start --help does not say it runs the Agents' runtimes:\n%s", out.String())
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	for _, want := range []string{"one Agent runtime (`docket agent serve`) for each enabled Agent profile", "[Apache License, Version 2.0](LICENSE)"} {
		if !strings.Contains(text, want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
	for _, wrong := range []string{"there is no notion yet of agents that start with the workbench", "Agents run separately"} {
		if strings.Contains(text, wrong) {
			t.Errorf("README.md still says %q, which docket start contradicts", wrong)
		}
	}
	if _, err := os.Stat("../../LICENSE"); err != nil {
		t.Errorf("no LICENSE at the root: %v", err)
	}
}
