package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/docketrun/docket/internal/capability"
)

type capabilityCmd struct {
	Check   capabilityCheckCmd   `cmd:"" help:"Validate a capability directory or .tar.gz and print its release digest."`
	Install capabilityInstallCmd `cmd:"" help:"Install a capability into a project."`
}

type capabilityCheckCmd struct {
	Path   string `arg:"" name:"dir" help:"Capability directory (with capability.toml) or its .tar.gz." type:"existingfile|existingdir"`
	Output string `short:"o" name:"output" default:"text" enum:"text,json" help:"Output format: text or json."`
}

// loadCapability reads a capability from a directory or a gzip-compressed tarball.
func loadCapability(path string) (*capability.Package, error) {
	if strings.HasSuffix(path, ".tar.gz") || strings.HasSuffix(path, ".tgz") {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return capability.LoadTarball(f)
	}
	return capability.Load(path)
}

func (c *capabilityCheckCmd) Run(e *env) error {
	if _, err := os.Stat(c.Path); err != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("capability check: %s: %w; pass a capability directory (with capability.toml) or its .tar.gz (see docket capability check --help)", c.Path, err)}
	}
	pkg, err := loadCapability(c.Path)
	if err != nil {
		if ps, ok := errors.AsType[capability.Problems](err); ok {
			for _, p := range ps {
				if p.Where != "" {
					fmt.Fprintf(e.Stderr, "%s: ", p.Where)
				}
				fmt.Fprintf(e.Stderr, "%s: %s\n", p.Code, p.Message)
			}
			return &exitError{code: exitFailure, err: fmt.Errorf("%s: %d problem(s) found", c.Path, len(ps))}
		}
		return err
	}
	d := pkg.Declarations
	if c.Output == "json" {
		return json.NewEncoder(e.Stdout).Encode(struct {
			ID        string `json:"id"`
			Version   string `json:"version"`
			Digest    string `json:"digest"`
			Rules     int    `json:"rules"`
			CaseTypes int    `json:"caseTypes"`
			Actions   int    `json:"actions"`
			Sources   int    `json:"sources"`
		}{pkg.Release.ID, pkg.Release.Version, pkg.Release.Digest, len(d.Rules), len(d.CaseTypes), len(d.Actions), len(d.Sources)})
	}
	fmt.Fprintf(e.Stdout, "ok: %s %s\n", pkg.Release, pkg.Release.Digest)
	fmt.Fprintf(e.Stdout, "  %d rules, %d case types, %d actions, %d sources\n", len(d.Rules), len(d.CaseTypes), len(d.Actions), len(d.Sources))
	return nil
}
