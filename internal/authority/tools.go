package authority

import (
	"context"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/capability"
	"github.com/docketrun/docket/internal/contract"
)

// advertiser is what a worker of a Connection last offered this serve: the Dispatcher
// that serves /work keeps it ([operation.Dispatcher.Advertised]).
type advertiser interface {
	Advertised(conn contract.ConnectionID) (contract.ToolWorker, []contract.ToolDescriptor, []string, bool)
}

// LockTool locks a Tool on a Connection (docs/workers.md, "Direct Actions"). Without a
// digest it locks the one the Connection's live worker advertises now, and refuses
// tool_not_advertised when none does; with one it refuses tool_lock_digest when a live
// worker advertises the Tool at another digest, and otherwise pins it, with the Tool's
// descriptor when the worker advertises it at that digest (a Tool locked with none is
// offered as no direct Action until it is locked again while advertised).
func (a *Authority) LockTool(ctx context.Context, c identity.Caller, project contract.ProjectID, conn string, l contract.ToolLock) (contract.ToolLock, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.ToolLock{}, err
	}
	cn, err := a.liveConnection(ctx, c, project, conn)
	if err != nil {
		return contract.ToolLock{}, err
	}
	if l.LockedBy != "" || l.LockedAt != nil || l.Descriptor != nil || l.Connection != "" {
		return contract.ToolLock{}, contract.Errorf(contract.CodeInvalidArgument, "lockedBy, lockedAt, descriptor and connection are set by the authority; send only the tool, its digest and its approval.")
	}
	var adv *contract.ToolDescriptor
	live := false
	if a.adverts != nil {
		if w, tools, _, ok := a.adverts.Advertised(cn.ID); ok && w.Live {
			live = true
			if i := slices.IndexFunc(tools, func(d contract.ToolDescriptor) bool { return string(d.Tool) == l.Tool }); i >= 0 {
				adv = &tools[i]
			}
		}
	}
	switch {
	case l.Digest == "" && adv == nil && !live:
		return contract.ToolLock{}, contract.Errorf(contract.CodeToolNotAdvertised,
			"no live worker polls Connection %s, so there is no advertised digest of %s to lock; start its worker (docket worker) or pin one with --digest.", cn.Name, l.Tool)
	case l.Digest == "" && adv == nil:
		return contract.ToolLock{}, contract.Errorf(contract.CodeToolNotAdvertised,
			"the worker of Connection %s does not advertise %s; add it to the worker's manifest (docket worker --print-tools lists what it offers).", cn.Name, l.Tool)
	case l.Digest == "":
		l.Digest = adv.Digest
	case adv != nil && !strings.EqualFold(adv.Digest, l.Digest):
		return contract.ToolLock{}, contract.Errorf(contract.CodeToolLockDigest,
			"the worker of Connection %s advertises %s at %s, not %s; lock without --digest to take what it runs now, or change its manifest first.", cn.Name, l.Tool, adv.Digest, l.Digest)
	}
	if adv != nil && !strings.EqualFold(adv.Digest, l.Digest) {
		adv = nil
	}
	if adv != nil {
		if err := capability.CheckDirect(*adv); err != nil {
			return contract.ToolLock{}, err
		}
	}
	l.Descriptor = adv
	return a.dir.LockTool(ctx, c, project, string(cn.ID), l)
}

// liveConnection returns project's live Connection named or numbered conn.
func (a *Authority) liveConnection(ctx context.Context, c identity.Caller, project contract.ProjectID, conn string) (contract.Connection, error) {
	cs, err := a.dir.Connections(ctx, c, project)
	if err != nil {
		return contract.Connection{}, err
	}
	for _, cn := range cs {
		if cn.Name == conn || string(cn.ID) == conn {
			if cn.RevokedAt != nil {
				return contract.Connection{}, contract.Errorf(contract.CodeCredentialRevoked, "connection %q is revoked; lock tools on a live connection.", conn)
			}
			return cn, nil
		}
	}
	return contract.Connection{}, contract.Errorf(contract.CodeNotFound, "project %s has no Connection %.64q; docket connection list names them.", project, conn)
}

// ToolInventory lists every Tool the worker of Connection conn advertised to this serve
// or that is locked on it, with its lock and the direct Action it is offered as, and
// the Connection's Sources with whether the worker's vault holds each.
func (a *Authority) ToolInventory(ctx context.Context, c identity.Caller, project contract.ProjectID, conn string) (contract.ConnectionTools, error) {
	if err := c.RequireMember(project); err != nil {
		return contract.ConnectionTools{}, err
	}
	cs, err := a.dir.Connections(ctx, c, project)
	if err != nil {
		return contract.ConnectionTools{}, err
	}
	i := slices.IndexFunc(cs, func(cn contract.Connection) bool { return cn.Name == conn || string(cn.ID) == conn })
	if i < 0 {
		return contract.ConnectionTools{}, contract.Errorf(contract.CodeNotFound, "project %s has no Connection %.64q; docket connection list names them.", project, conn)
	}
	out := contract.ConnectionTools{Connection: cs[i], Tools: []contract.ToolEntry{}, Sources: []contract.SourceEntry{}}
	var tools []contract.ToolDescriptor
	var vault []string
	heard := false
	if a.adverts != nil {
		var w contract.ToolWorker
		if w, tools, vault, heard = a.adverts.Advertised(cs[i].ID); heard {
			out.Worker = &w
		}
	}
	locks, err := a.dir.ToolLocks(ctx, c, project, string(cs[i].ID))
	if err != nil {
		return contract.ConnectionTools{}, err
	}
	byTool := map[string]*contract.ToolEntry{}
	entry := func(tool string) *contract.ToolEntry {
		if e, ok := byTool[tool]; ok {
			return e
		}
		e := &contract.ToolEntry{Tool: tool}
		byTool[tool] = e
		return e
	}
	for _, d := range tools {
		entry(string(d.Tool)).Advertised = &d
	}
	for _, l := range locks {
		e := entry(l.Tool)
		e.Lock = &l
		if l.Descriptor != nil && l.Descriptor.Direct && cs[i].RevokedAt == nil {
			e.Action = l.Tool
		}
	}
	for _, e := range byTool {
		e.Stale = e.Lock != nil && e.Advertised != nil && !strings.EqualFold(e.Lock.Digest, e.Advertised.Digest)
		out.Tools = append(out.Tools, *e)
	}
	slices.SortFunc(out.Tools, func(x, y contract.ToolEntry) int { return strings.Compare(x.Tool, y.Tool) })
	srcs, err := a.dir.Sources(ctx, c, project, string(cs[i].ID))
	if err != nil {
		return contract.ConnectionTools{}, err
	}
	for _, s := range srcs {
		e := contract.SourceEntry{Source: s}
		if heard {
			held := slices.Contains(vault, s.Name)
			e.InVault = &held
		}
		out.Sources = append(out.Sources, e)
	}
	return out, nil
}
