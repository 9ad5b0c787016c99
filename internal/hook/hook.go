// Package hook is the protocol-neutral side of a coding agent's hook
// (docs/coding-agents.md): it resolves where a file tool lands, reports each call to the
// authority before it runs and after, and answers through the coding agent's own
// protocol, which an adapter beneath it (claudecode) speaks.
package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/landing"
)

// Call is one tool call as a coding agent's hook reports it before the call runs.
type Call struct {
	Session string
	CallID  string
	Tool    string
	Input   json.RawMessage
	Cwd     string // the coding agent's working directory, absolute
	// File is where a file tool reads or writes, as the coding agent names it (absolute,
	// or relative to Cwd); "" for any other tool.
	File    string
	Command string // a shell tool's command; "" for any other tool
}

// Ran is what a call came to, as a coding agent's hook reports it after the call.
type Ran struct {
	CallID      string
	Tool        string
	OK          bool
	ExitCode    *int64
	Interrupted bool
	Response    []byte // the tool's response as the coding agent gave it; only its digest leaves
}

// Protocol is one coding agent's hook protocol: what it sends on stdin, and how it reads
// a decision. An adapter decodes strictly what it documents and tolerates fields it adds.
type Protocol interface {
	Name() string // the coding agent, as the authority records it: "claude-code"
	DecodePre(b []byte) (Call, error)
	DecodePost(b []byte) (Ran, error)
	// Verdict is what the hook prints for a call before it runs.
	Verdict(allow bool, reason string) ([]byte, error)
}

// Authority is what the hook asks; *apiclient.Client is one.
type Authority interface {
	Hook(ctx context.Context, call contract.HookCall) (contract.HookVerdict, error)
	HookOutcome(ctx context.Context, out contract.HookOutcome) (int64, error)
}

// DefaultWait is how long a call waits for a decision before it is denied.
const DefaultWait = 5 * time.Minute

// Hook reports a coding agent's calls to the authority through one Protocol.
type Hook struct {
	Protocol  Protocol
	Authority Authority
	Root      string        // the repository the coding agent works in, absolute
	Wait      time.Duration // how long a call waits for a decision; 0 is DefaultWait
	// Protected are the files and directories no tool call may touch, free or decided:
	// the hook's token file and config directory, the coding agent's settings that hold
	// the hook, the repository's git config (docs/coding-agents.md). Credentials' names
	// are protected besides.
	Protected []string
}

// Pre answers a call before it runs, from the protocol's input in: allowed only when the
// authority allows it. It fails closed: input that does not decode, an authority that
// cannot be reached or a path that moved while the call waited are each a denial with
// the reason, never an error the coding agent could take for a pass.
func (h Hook) Pre(ctx context.Context, in []byte) ([]byte, error) {
	allow, reason := h.pre(ctx, in)
	return h.Protocol.Verdict(allow, reason)
}

func (h Hook) pre(ctx context.Context, in []byte) (bool, string) {
	call, err := h.Protocol.DecodePre(in)
	if err != nil {
		return false, "Docket's hook could not read this call (" + teaching(err) + "); the call was not run"
	}
	hc := contract.HookCall{CLI: h.Protocol.Name(), Session: call.Session, CallID: call.CallID, Tool: call.Tool,
		Input: call.Input, Command: call.Command, WaitMillis: h.wait().Milliseconds()}
	var at landed
	if call.File != "" {
		if at, err = h.land(call.Cwd, call.File); err != nil {
			return false, "Docket's hook could not resolve where this call lands (" + err.Error() + "); the call was not run"
		}
		hc.Path, hc.PathNeedsMember, hc.Protected = at.path, at.needsMember, at.protected
	}
	v, err := h.Authority.Hook(ctx, hc)
	if err != nil {
		return false, "Docket could not record this call (" + teaching(err) + "); the call was not run — ask the user to check docket serve"
	}
	if !v.Allow {
		return false, v.Reason
	}
	if call.File != "" {
		// The decision holds for the path as it landed when it was asked; a link swapped
		// in meanwhile makes it another call, which must be asked again. The Operation,
		// done when it was allowed, is then recorded refused.
		now, err := h.land(call.Cwd, call.File)
		if err != nil || now != at {
			why := fmt.Sprintf("%s now lands somewhere else than the path Docket allowed (%s)", call.File, hc.Path)
			if _, rerr := h.Authority.HookOutcome(ctx, contract.HookOutcome{CallID: call.CallID, Tool: call.Tool, Withdrawn: why}); rerr != nil {
				why += "; recording that it did not run failed too (" + teaching(rerr) + ")"
			}
			return false, why + "; send the call again for a new decision"
		}
	}
	return true, ""
}

func (h Hook) wait() time.Duration {
	if h.Wait > 0 {
		return h.Wait
	}
	return DefaultWait
}

// Post records what a call came to once it ran, from the protocol's input in: the
// exit and the digest and size of the tool's response, never the response itself.
func (h Hook) Post(ctx context.Context, in []byte) error {
	ran, err := h.Protocol.DecodePost(in)
	if err != nil {
		return err
	}
	out := contract.HookOutcome{CallID: ran.CallID, Tool: ran.Tool, OK: ran.OK, ExitCode: ran.ExitCode,
		Interrupted: ran.Interrupted, OutputBytes: int64(len(ran.Response))}
	resp := ran.Response
	if len(resp) > contract.MaxHookOutput {
		resp, out.Truncated = resp[:contract.MaxHookOutput], true
	}
	sum := sha256.Sum256(resp)
	out.OutputDigest = "sha256:" + hex.EncodeToString(sum[:])
	if _, err := h.Authority.HookOutcome(ctx, out); err != nil {
		return fmt.Errorf("record the outcome of %s %s: %w", ran.Tool, ran.CallID, err)
	}
	return nil
}

// teaching is err's teaching sentence when it has one.
func teaching(err error) string {
	if ce, ok := errors.AsType[*contract.Error](err); ok && ce.Teaching != "" {
		return string(ce.Code) + ": " + ce.Teaching
	}
	return err.Error()
}

// landed is where a file tool's call lands, as the hook tells the authority.
type landed struct {
	path        string // resolved through every link: relative to the root inside it, else absolute
	needsMember string // why it does not land plainly inside the root; "" when it does
	protected   string // which protected path it lands on; "" for none
}

// land resolves where the path p of a call lands, p absolute or relative to cwd. Whether
// it lands plainly inside the repository is judged by [landing.Check] — the worker's own
// check — on p as written, relative to the root; a p that does not name a place under the
// root as written is not plain either, wherever it resolves to.
func (h Hook) land(cwd, p string) (landed, error) {
	abs, err := absolute(cwd, p)
	if err != nil {
		return landed{}, err
	}
	real, err := resolve(abs)
	if err != nil {
		return landed{}, err
	}
	base, err := filepath.EvalSymlinks(h.Root)
	if err != nil {
		return landed{}, fmt.Errorf("resolve the repository root: %w", err)
	}
	at := landed{path: relTo(base, real)}
	rel, under := asWritten(h.Root, base, abs)
	switch {
	case !under:
		at.needsMember = fmt.Sprintf("%.120q is outside the repository as written, and resolves to %.200q", p, at.path)
	default:
		if why := landing.Check(h.Root, rel); why != "" {
			at.needsMember = fmt.Sprintf("%s; it resolves to %.200q", why, at.path)
		}
	}
	at.protected = h.protectedBy(real, filepath.Base(abs), at.path)
	return at, nil
}

// absolute returns p joined to cwd when it is relative, without cleaning it: a ".."
// segment is judged as written.
func absolute(cwd, p string) (string, error) {
	if filepath.IsAbs(p) {
		return p, nil
	}
	if !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("the path %q is not absolute and the working directory is unknown", p)
	}
	return cwd + string(filepath.Separator) + p, nil
}

// asWritten returns the absolute path abs, as written, relative to the repository root
// with forward slashes — the root as configured (root) or resolved (base) — and whether
// abs names a place under the root at all.
func asWritten(root, base, abs string) (string, bool) {
	abs = filepath.ToSlash(abs)
	for _, r := range []string{root, base} {
		r = strings.TrimSuffix(filepath.ToSlash(r), "/")
		if abs == r {
			return ".", true
		}
		if rest, ok := strings.CutPrefix(abs, r+"/"); ok {
			return rest, true
		}
	}
	return "", false
}

// relTo returns the real path p relative to the real root base with forward slashes
// when it lies inside it, else p itself, absolute: no path class covers that.
func relTo(base, p string) string {
	rel, err := filepath.Rel(base, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}

// protectedBy says which protected path the call whose real landing is real, written
// with the base name name and resolving to shown, touches: one of h.Protected (the same
// file under any name, or a path inside a protected directory), or a credential's name
// (the last element, or any element inside the repository); "" for none. A protected path
// that does not exist protects nothing: nothing is there to reach.
func (h Hook) protectedBy(real, name, shown string) string {
	for _, p := range h.Protected {
		info, err := os.Stat(p)
		if err != nil {
			continue
		}
		rp, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if info.IsDir() && within(real, rp) || real == rp {
			return fmt.Sprintf("%.200q is inside %s, one of the files the hook protects", shown, p)
		}
		if li, err := os.Stat(real); err == nil && !info.IsDir() && os.SameFile(info, li) {
			return fmt.Sprintf("%.200q is %s under another name, one of the files the hook protects", shown, p)
		}
	}
	parts := []string{name, filepath.Base(real)}
	if !filepath.IsAbs(shown) {
		parts = append(parts, strings.Split(shown, "/")...)
	}
	for _, part := range parts {
		if landing.Credential(part) {
			return fmt.Sprintf("%.200q has the name of a key or a certificate (*.pem, *.key, *.p12, *.pfx, id_*)", shown)
		}
	}
	return ""
}

// within reports whether p is dir or lies under it; both are clean absolute paths.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// Resolve returns where p lands, resolved through every link: p is absolute or relative
// to cwd, and is resolved element by element as the operating system does, a ".." after a
// link climbing from the link's target; the part that exists is resolved (a link anywhere
// on the way, the last element included), the rest joined on. A landing inside root is
// returned relative to root with forward slashes; one outside it absolute, so no path
// class covers it.
func Resolve(root, cwd, p string) (string, error) {
	abs, err := absolute(cwd, p)
	if err != nil {
		return "", err
	}
	land, err := resolve(abs)
	if err != nil {
		return "", err
	}
	base, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolve the repository root: %w", err)
	}
	return relTo(base, land), nil
}

// resolve resolves the absolute path p element by element, as the operating system
// walks it: each existing element through its links, a ".." from the real directory it
// follows; once an element does not exist, the rest, which holds no link, is joined on.
func resolve(p string) (string, error) {
	parts := strings.Split(p, string(filepath.Separator))
	cur := string(filepath.Separator)
	if v := filepath.VolumeName(p); v != "" {
		cur, parts[0] = v+string(filepath.Separator), ""
	}
	for i, part := range parts {
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		r, err := filepath.EvalSymlinks(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if l, lerr := os.Lstat(next); lerr == nil && l.Mode()&fs.ModeSymlink != 0 {
				return "", fmt.Errorf("%s is a link to nothing; a write through it would land where the link points", next)
			}
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		case err != nil:
			return "", fmt.Errorf("resolve %s: %w", next, err)
		}
		cur = r
	}
	return cur, nil
}
