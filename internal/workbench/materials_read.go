package workbench

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
	"github.com/docketrun/docket/internal/worker/toolset"
)

// The material read as docket start sets it up the first time files are added: the
// capability below, whose read_material Action runs docket.material.read@1 against the
// file Source MaterialsSource, bound on the Connection local and held in the worker's
// vault at the material area (docs/materials.md).
const (
	MaterialsSource     = "materials"
	MaterialsCapability = "docket.materials"
	MaterialsWord       = "material_text"
)

// materialsCapability is the capability.toml of MaterialsCapability. Its read_material
// Action needs a person's approval: a material is a person's file, and each read of it
// is a decision of its own.
//
//go:embed materialscap/capability.toml
var materialsCapability string

// materialsLockWait bounds the wait for the worker to advertise the read Tool, right
// after a start.
const materialsLockWait = 30 * time.Second

// materialReader sets the material read up once per docket start, at the first add.
type materialReader struct {
	rts   *runtimes
	files toolset.Files
	root  string // the material area

	mu    sync.Mutex // held through a set-up, so two adds do it once
	ready bool
}

// ensure makes the Agents' material read ready, each step only when it is not done
// already, so what a member changed since stays: the area in the vault as a file Source
// the workspace Tools may not read, the capability installed, its Source bound with the
// word material_text, and docket.material.read@1 locked at the digest the worker
// advertises with a person's approval (as a direct Action too, which would otherwise
// need none, being a read).
func (m *materialReader) ensure(ctx context.Context, cl *apiclient.Client) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ready {
		return nil
	}
	if _, err := m.files.AddMaterialArea(MaterialsSource, m.root); err != nil {
		return err
	}
	project := m.rts.project()
	if err := m.install(ctx, cl, project); err != nil {
		return err
	}
	if err := m.bind(ctx, cl, project); err != nil {
		return err
	}
	if err := m.lock(ctx, cl, project); err != nil {
		return err
	}
	m.ready = true
	return nil
}

// install installs the capability unless the project has a release of it, or declares
// what it would (a member set the read up by hand).
func (m *materialReader) install(ctx context.Context, cl *apiclient.Client, project string) error {
	rs, err := apiclient.All[contract.Release](ctx, cl, apiclient.ProjectPath(project, "capabilities"))
	if err != nil {
		return fmt.Errorf("list the project's capabilities: %w", err)
	}
	if slices.ContainsFunc(rs, func(r contract.Release) bool { return r.ID == MaterialsCapability }) {
		return nil
	}
	up := contract.CapabilityUpload{Files: map[string]string{"capability.toml": materialsCapability}}
	err = cl.Do(ctx, http.MethodPost, apiclient.ProjectPath(project, "capabilities"), up, nil)
	if contract.CodeOf(err) == contract.CodeCapabilityInvalid {
		// It clashes with what the project declares: a read_material Action or a
		// materials Source a member installed by hand, which is kept.
		fmt.Fprintf(m.rts.cfg.Stderr, "docket start: %s is not installed, the project's own capabilities clash with it (%s); the material read is what they declare\n",
			MaterialsCapability, teachingOf(err))
		return nil
	}
	if err != nil {
		return fmt.Errorf("install %s: %w", MaterialsCapability, err)
	}
	return nil
}

// bind binds the Source on the Connection local unless it is bound.
func (m *materialReader) bind(ctx context.Context, cl *apiclient.Client, project string) error {
	path := apiclient.ProjectPath(project, "connections", Connection, "sources")
	srcs, err := apiclient.All[contract.Source](ctx, cl, path)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(srcs, func(s contract.Source) bool { return s.Name == MaterialsSource }) {
		return nil
	}
	src := contract.Source{Type: "file", Words: []string{MaterialsWord}, Tier: contract.TierAttested}
	return cl.Do(ctx, http.MethodPut, path+"/"+url.PathEscape(MaterialsSource), src, nil)
}

// lock locks the read Tool on the Connection local, needing a person, unless it is
// locked there; right after a start the worker may not have advertised it yet.
func (m *materialReader) lock(ctx context.Context, cl *apiclient.Client, project string) error {
	deadline := time.Now().Add(materialsLockWait)
	for {
		inv, err := cl.ToolInventory(ctx, project, Connection)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(inv.Tools, func(e contract.ToolEntry) bool { return e.Tool == string(worker.MaterialReadTool) && e.Lock != nil }) {
			return nil
		}
		_, err = cl.LockTool(ctx, project, Connection, string(worker.MaterialReadTool), "", contract.ApprovalPerson)
		code := contract.CodeOf(err)
		if err == nil {
			return nil
		}
		if code != contract.CodeToolNotAdvertised && code != contract.CodeNoLiveWorker {
			return err
		}
		if time.Now().After(deadline) {
			return contract.Errorf(contract.CodeUnavailable, "the worker of %s did not offer %s within %s; see its log (docket start printed where), then add the files again.",
				Connection, worker.MaterialReadTool, materialsLockWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
