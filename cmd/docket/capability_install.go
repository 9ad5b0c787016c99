package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// capabilityInstallCmd uploads a capability directory to the authority, which validates
// it, stores an immutable release and installs it into the project.
type capabilityInstallCmd struct {
	clientFlags
	Dir string `arg:"" name:"dir" help:"Capability directory (with capability.toml)." type:"existingdir"`
}

// maxUploadFile bounds one uploaded file, matching the authority's package limits.
const maxUploadFile = 1 << 20

func (c *capabilityInstallCmd) Run(ctx context.Context, e *env) error {
	up, err := readCapabilityDir(c.Dir)
	if err != nil {
		return err
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var in contract.Installed
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "capabilities"), up, &in); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, in)
	}
	verb := "installed"
	if !in.Created {
		verb = "installed (release already stored)"
	}
	_, err = fmt.Fprintf(e.Stdout, "%s@%s %s in project %s\ndigest %s\n", in.Release.ID, in.Release.Version, verb, in.Project, in.Release.Digest)
	return err
}

// readCapabilityDir reads the files of dir that a release covers: capability.toml and the
// *.dl rule files at its top level. The authority validates them; other files stay here.
func readCapabilityDir(dir string) (contract.CapabilityUpload, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return contract.CapabilityUpload{}, fmt.Errorf("read capability: %w", err)
	}
	up := contract.CapabilityUpload{Files: map[string]string{}}
	for _, ent := range entries {
		name := ent.Name()
		if !ent.Type().IsRegular() || !(name == "capability.toml" || strings.HasSuffix(name, ".dl") && !strings.HasPrefix(name, ".")) {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := ent.Info()
		if err != nil {
			return contract.CapabilityUpload{}, fmt.Errorf("read capability: %w", err)
		}
		if fi.Size() > maxUploadFile {
			return contract.CapabilityUpload{}, fmt.Errorf("read capability: %s is larger than %d bytes", path, maxUploadFile)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return contract.CapabilityUpload{}, fmt.Errorf("read capability: %w", err)
		}
		up.Files[name] = string(b)
	}
	if _, ok := up.Files["capability.toml"]; !ok {
		return contract.CapabilityUpload{}, fmt.Errorf("read capability: %s has no capability.toml", dir)
	}
	return up, nil
}
