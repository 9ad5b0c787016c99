// Package debpkg provides the Debian package of docket: the binary, a systemd unit for
// docket serve and a templated one for each Connection's docket worker, the defaults file
// they read, and the maintainer scripts that make the docket system user and its data dir
// under /var/lib/docket (docs/deploy.md).
package debpkg

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/goreleaser/nfpm/v2"
	"github.com/goreleaser/nfpm/v2/deb"
	"github.com/goreleaser/nfpm/v2/files"
)

//go:embed files
var assets embed.FS

// Config is what one package is built from.
type Config struct {
	// Binary is the path of the docket binary to package, built for Arch.
	Binary string
	// Version is the package's version: a release's (1.2.0) or a build's (0.0.0+git3f2a9c1).
	Version string
	// Arch is Debian's name of the binary's architecture (amd64, arm64).
	Arch string
	// MTime is the time every file in the package carries, so that the same inputs make
	// the same package.
	MTime time.Time
}

// version is what a Debian version this package takes looks like: digits first, then
// the characters Debian allows, no epoch and no revision (the package is its own).
var version = regexp.MustCompile(`^[0-9][A-Za-z0-9.+~]*$`)

// Validate says what in c is missing or malformed, and how to fix it.
func (c Config) Validate() error {
	var errs []error
	if c.Binary == "" {
		errs = append(errs, errors.New("name the docket binary to package (go build -o docket ./cmd/docket)"))
	} else if fi, err := os.Stat(c.Binary); err != nil {
		errs = append(errs, fmt.Errorf("the binary %s: %w", c.Binary, err))
	} else if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		errs = append(errs, fmt.Errorf("the binary %s is not an executable file", c.Binary))
	}
	if !version.MatchString(c.Version) {
		errs = append(errs, fmt.Errorf("version %q is not a Debian version of this package: start with a digit, then letters, digits and . + ~ (e.g. 1.2.0 or 0.0.0+git3f2a9c1)", c.Version))
	}
	if c.Arch != "amd64" && c.Arch != "arm64" {
		errs = append(errs, fmt.Errorf("arch %q: build for amd64 or arm64", c.Arch))
	}
	return errors.Join(errs...)
}

// Paths the package installs.
const (
	BinaryPath  = "/usr/bin/docket"
	ServeUnit   = "/lib/systemd/system/docket-serve.service"
	WorkerUnit  = "/lib/systemd/system/docket-worker@.service"
	DefaultFile = "/etc/default/docket"
)

// Build writes the package c describes to w. The embedded unit files and scripts are
// written into a directory of their own first, which Build removes, since the packager
// reads every file by its path.
func Build(c Config, w io.Writer) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("build the docket package: %w", err)
	}
	dir, err := os.MkdirTemp("", "docket-deb-")
	if err != nil {
		return fmt.Errorf("build the docket package: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := fs.WalkDir(assets, "files", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, d.Name()), b, 0o644)
	}); err != nil {
		return fmt.Errorf("build the docket package: unpack its files: %w", err)
	}
	at := func(name string) string { return filepath.Join(dir, name) }
	file := func(mode os.FileMode) *files.ContentFileInfo {
		return &files.ContentFileInfo{Owner: "root", Group: "root", Mode: mode, MTime: c.MTime}
	}
	info := &nfpm.Info{
		Name:        "docket",
		Arch:        c.Arch,
		Platform:    "linux",
		Version:     c.Version,
		Section:     "admin",
		Priority:    "optional",
		Maintainer:  "Docket <docket@localhost>",
		Description: "Governed runtime for AI agents: agents act only through Actions a person or a policy allows, and every step is a hash-chained event.",
		Homepage:    "https://github.com/docketrun/docket",
		License:     "Apache-2.0",
		MTime:       c.MTime,
		Overridables: nfpm.Overridables{
			Depends: []string{"adduser"},
			Contents: files.Contents{
				{Source: c.Binary, Destination: BinaryPath, FileInfo: file(0o755)},
				{Source: at("docket-serve.service"), Destination: ServeUnit, FileInfo: file(0o644)},
				{Source: at("docket-worker@.service"), Destination: WorkerUnit, FileInfo: file(0o644)},
				{Source: at("default"), Destination: DefaultFile, Type: files.TypeConfigNoReplace, FileInfo: file(0o644)},
			},
			Scripts: nfpm.Scripts{PostInstall: at("postinst"), PreRemove: at("prerm")},
		},
	}
	info = nfpm.WithDefaults(info)
	if err := nfpm.PrepareForPackager(info, "deb"); err != nil {
		return fmt.Errorf("build the docket package: %w", err)
	}
	if err := deb.Default.Package(info, w); err != nil {
		return fmt.Errorf("build the docket package: %w", err)
	}
	return nil
}
