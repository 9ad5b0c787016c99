// Package authoritytest builds the authorities that tests of the authority and of what
// sits above it start from: an [authority.Authority] over a store, with its first member
// and project, and when asked a capability installed and an Agent created.
package authoritytest

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// Passphrase is the first member's passphrase.
const Passphrase = "correct horse battery"

// Options says what to build. Store is required.
type Options struct {
	Store store.Store
	Key   identity.Key     // default: identity.Key{1}
	Now   func() time.Time // default: time.Now
	// Capability, when set, is installed into the project: a directory whose files are
	// the package ([ReadPackage]).
	Capability string
	// Agent, when set, names an Agent created in the project.
	Agent string
	// Signer, when set, signs the project's checkpoints.
	Signer *signing.Keyring
	// Logger, CheckpointEvery, MaxOpenTasks and MaxTasksPerHour are the authority's own
	// ([authority.Config]); zero takes its defaults.
	Logger                        *slog.Logger
	CheckpointEvery               int64
	MaxOpenTasks, MaxTasksPerHour int
}

// Project is an authority with member "ada" of project "default".
type Project struct {
	A     *authority.Authority
	Token identity.Token // the member's session token
	Admin identity.Caller
	Agent identity.Caller // zero unless Options.Agent was set
}

// New builds the authority o describes, failing t when any step fails.
func New(t testing.TB, o Options) Project {
	t.Helper()
	ctx := t.Context()
	a := Bare(t, o)
	p := Project{A: a}
	b, err := a.Directory().Init(ctx, "ada", Passphrase, "default")
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	p.Token = b.Token
	if p.Admin, err = a.Directory().Authenticate(ctx, b.Token); err != nil {
		t.Fatalf("Authenticate(init token): %v", err)
	}
	if o.Capability != "" {
		if _, err := a.InstallCapability(ctx, p.Admin, "default", ReadPackage(t, o.Capability)); err != nil {
			t.Fatalf("InstallCapability(%s): %v", o.Capability, err)
		}
	}
	if o.Agent != "" {
		at, err := a.Directory().CreateAgent(ctx, p.Admin, "default", contract.CreateAgentRequest{Name: o.Agent})
		if err != nil {
			t.Fatalf("CreateAgent(%s): %v", o.Agent, err)
		}
		if p.Agent, err = a.Directory().Authenticate(ctx, identity.Token(at.Token)); err != nil {
			t.Fatalf("Authenticate(agent token): %v", err)
		}
	}
	return p
}

// Bare builds the authority o describes over o.Store and does nothing with it: no Init,
// no Restore. Tests of Init itself start from it, and so do tests of another instance
// that reads the store as it is asked, as a serve does before anything restores it.
// Capability and Agent are not read.
func Bare(t testing.TB, o Options) *authority.Authority {
	t.Helper()
	if o.Key == (identity.Key{}) {
		o.Key = identity.Key{1}
	}
	a, err := authority.New(authority.Config{Store: o.Store, Key: o.Key, Now: o.Now, Signer: o.Signer,
		Logger: o.Logger, CheckpointEvery: o.CheckpointEvery, MaxOpenTasks: o.MaxOpenTasks, MaxTasksPerHour: o.MaxTasksPerHour})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Open builds another authority over o.Store, which already holds the project New made,
// as a second docket serve over the same database opens it: built, then restored from the
// store. Capability and Agent are not read.
func Open(t testing.TB, o Options) *authority.Authority {
	t.Helper()
	a := Bare(t, o)
	if err := a.Restore(t.Context()); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	return a
}

// ReadPackage returns the files of the capability directory dir as an upload.
func ReadPackage(t testing.TB, dir string) contract.CapabilityUpload {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	up := contract.CapabilityUpload{Files: map[string]string{}}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		up.Files[e.Name()] = string(b)
	}
	return up
}
