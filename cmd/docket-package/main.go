// Command docket-package builds docket's Debian package from a docket binary
// (docs/deploy.md). It is a tool of the build, not of the product, so that the packaging
// library stays out of the docket binary.
//
//	go build -o docket ./cmd/docket
//	go run ./cmd/docket-package --binary docket --version 1.2.0 --out docket_1.2.0_amd64.deb
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/docketrun/docket/internal/debpkg"
)

func main() {
	if err := run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "docket-package:", err)
		os.Exit(1)
	}
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("docket-package", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: docket-package --binary FILE --version V [--arch A] --out FILE.deb

Builds docket's Debian package: the binary as /usr/bin/docket, systemd units for docket serve
and for each Connection's docket worker, /etc/default/docket, and the docket system user with
its data dir /var/lib/docket (docs/deploy.md). Files carry $SOURCE_DATE_EPOCH as their time
when it is set, so the same inputs make the same package.

Examples:
  go build -o docket ./cmd/docket
  go run ./cmd/docket-package --binary docket --version 1.2.0 --out docket_1.2.0_amd64.deb
  sudo dpkg -i docket_1.2.0_amd64.deb

`)
		fs.PrintDefaults()
	}
	var c debpkg.Config
	var out string
	fs.StringVar(&c.Binary, "binary", "", "the docket binary to package")
	fs.StringVar(&c.Version, "version", "", "the package's version, e.g. 1.2.0 or 0.0.0+git3f2a9c1")
	fs.StringVar(&c.Arch, "arch", runtime.GOARCH, "Debian's name of the binary's architecture: amd64 or arm64")
	fs.StringVar(&out, "out", "", "where to write the .deb")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if out == "" {
		return fmt.Errorf("name the .deb to write with --out")
	}
	c.MTime = time.Now().UTC()
	if s := getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH %q is not seconds since 1970: %w", s, err)
		}
		c.MTime = time.Unix(sec, 0).UTC()
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := debpkg.Build(c, f); err != nil {
		f.Close()
		os.Remove(out)
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (docket %s, %s)\n", out, c.Version, c.Arch)
	return err
}
