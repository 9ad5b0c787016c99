package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/demo"
	"github.com/docketrun/docket/internal/workbench"
)

// installExample is the Get started page's install under docket start: it lays the
// verified-calculation example out in spec.Dir, adds its workspace to the worker's vault
// (docket start's own), and runs, against the serve at url as the data dir's member,
// the verbs a person would type: capability install, source bind, and a tool lock for
// each Tool its Actions run, at the digest the worker advertises (docs/quickstart.md).
func installExample(ctx context.Context, e *env, dir, url string, spec workbench.ExampleSpec) error {
	ex, err := demo.LayOutExample(spec.Dir, spec.Approve)
	if err != nil {
		return err
	}
	manifest, err := os.ReadFile(spec.Manifest)
	if err != nil {
		return fmt.Errorf("read the worker's tool manifest: %w", err)
	}
	tools, err := demo.ExampleTools(manifest)
	if err != nil {
		return contract.Errorf(contract.CodeInvalidArgument, "the worker's tool manifest %s cannot be read (%v); fix it, then install the example again.", spec.Manifest, err)
	}
	if err := addVaultSource(spec.Vault, demo.ExampleSource, ex.Workspace); err != nil {
		return err
	}
	verbs := [][]string{
		{"capability", "install", ex.Capability},
		{"source", "bind", "--connection", workbench.Connection, "--name", demo.ExampleSource, "--type", "file", "--words", strings.Join(demo.ExampleWords, ",")},
	}
	for id, digest := range tools {
		verbs = append(verbs, []string{"tool", "lock", "--connection", workbench.Connection, "--tool", string(id), "--digest", digest})
	}
	for _, args := range verbs {
		if err := asMember(ctx, e, dir, url, args); err != nil {
			return fmt.Errorf("docket %s: %w", strings.Join(args[:2], " "), err)
		}
	}
	return nil
}

// asMember runs one docket verb against the serve at url with the data dir's member
// token, whatever DOCKET_URL and DOCKET_TOKEN say, as createConnection does.
func asMember(ctx context.Context, e *env, dir, url string, args []string) error {
	sub := &env{Stdin: e.Stdin, Stdout: io.Discard, Stderr: e.Stderr, Getenv: func(k string) string {
		switch k {
		case datadir.HomeEnv:
			return dir
		case datadir.URLEnv:
			return url
		case "DOCKET_TOKEN":
			return ""
		}
		return e.Getenv(k)
	}}
	return run(ctx, args, sub)
}

// addVaultSource adds the file Source name, rooted at root, to the vault at path, keeping
// every other Source as it is. A Source of that name with another root is refused: the
// vault is the person's as well, and what it holds is not replaced.
func addVaultSource(path, name, root string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the worker's vault: %w", err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return contract.Errorf(contract.CodeInvalidArgument, "the worker's vault %s is not a JSON object (%v); fix it, then install the example again.", path, err)
	}
	sources := map[string]json.RawMessage{}
	if raw, ok := doc["sources"]; ok {
		if err := json.Unmarshal(raw, &sources); err != nil {
			return contract.Errorf(contract.CodeInvalidArgument, "the sources of the worker's vault %s are not a JSON object (%v); fix it, then install the example again.", path, err)
		}
	}
	want := struct {
		Type string `json:"type"`
		Root string `json:"root"`
	}{"file", root}
	if raw, ok := sources[name]; ok {
		var have struct {
			Type string `json:"type"`
			Root string `json:"root"`
		}
		if json.Unmarshal(raw, &have) == nil && have == want {
			return nil
		}
		return contract.Errorf(contract.CodeAlreadyExists, "the worker's vault %s already has a Source %q, not the example's workspace %s; remove it or install the example by hand.", path, name, root)
	}
	src, err := json.Marshal(want)
	if err != nil {
		return err
	}
	sources[name] = src
	if doc["sources"], err = json.Marshal(sources); err != nil {
		return err
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.Write(out)
	buf.WriteByte('\n')
	return datadir.WritePrivate(path, buf.Bytes())
}
