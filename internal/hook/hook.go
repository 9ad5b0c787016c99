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
	if call.File != "" {
		if hc.Path, err = Resolve(h.Root, call.Cwd, call.File); err != nil {
			return false, "Docket's hook could not resolve where this call lands (" + err.Error() + "); the call was not run"
		}
	}
	v, err := h.Authority.Hook(ctx, hc)
	if err != nil {
		return false, "Docket could not record this call (" + teaching(err) + "); the call was not run — ask the user to check docket serve"
	}
	if !v.Allow {
		return false, v.Reason
	}
	if call.File != "" {
		// The decision holds for the path as it resolved; a link swapped in meanwhile makes
		// it another call, which must be asked again.
		now, err := Resolve(h.Root, call.Cwd, call.File)
		if err != nil || now != hc.Path {
			return false, fmt.Sprintf("%s now lands somewhere else than the path Docket allowed (%s); send the call again for a new decision", call.File, hc.Path)
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

// Resolve returns where p lands, resolved through every link: p is absolute or relative
// to cwd, and the part of it that exists is resolved (a link anywhere on the way, the
// last element included), the rest joined on. A landing inside root is returned relative
// to root with forward slashes; one outside it absolute, so no path class covers it.
func Resolve(root, cwd, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("the path %q is not absolute and the working directory is unknown", p)
	}
	land, err := resolveExisting(filepath.Clean(p))
	if err != nil {
		return "", err
	}
	base, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolve the repository root: %w", err)
	}
	rel, err := filepath.Rel(base, land)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return land, nil
	}
	return filepath.ToSlash(rel), nil
}

// resolveExisting resolves the longest existing prefix of the clean absolute path p
// through its links and joins the rest, which does not exist and so holds no link.
func resolveExisting(p string) (string, error) {
	var rest []string
	for cur := p; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				r = filepath.Join(r, rest[i])
			}
			return r, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("resolve %s: %w", cur, err)
		}
		if l, lerr := os.Lstat(cur); lerr == nil && l.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a link to nothing; a write through it would land where the link points", cur)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", fmt.Errorf("resolve %s: %w", p, err)
		}
		rest, cur = append(rest, filepath.Base(cur)), parent
	}
}
