// Package worker provides what a Docket worker needs to run served calls: the tool
// manifest, the Source vault, the Adapter contract and the executor that checks a served
// row's grant and turns it into one adapter call.
package worker

import (
	"context"
	"errors"

	"github.com/docketrun/docket/internal/contract"
)

// Adapter runs calls of the Tools that name it in the manifest. Implementations live in
// adapters/<name>/ and must be safe for concurrent use.
//
// Execute runs call once and never retries it. It returns an Outcome that says explicitly
// what happened:
//   - StatusOK with the rows, and a nil error;
//   - StatusRefused when the call was refused or failed before any effect could happen;
//   - StatusUnknown when it failed after the effect may have happened (a timeout after a
//     request was sent, a killed process, a lost connection). An adapter never guesses.
//
// For the last two the error is the cause, for the worker's log; Outcome.Code and
// Outcome.Reason are what leaves the process and never hold a secret. Use [Refuse] and
// [Unknown] to build both from one error.
type Adapter interface {
	Execute(ctx context.Context, call Call) (Outcome, error)
}

// ToolChecker is an optional ability of an Adapter: it checks a Tool's definition when the
// manifest is loaded (an entry path, a SQL template), so a bad Tool is refused before it is
// ever advertised.
type ToolChecker interface {
	CheckTool(id contract.ToolID, t Tool) error
}

// Versioner is an optional ability of an Adapter: it names the adapter's version, which
// goes into the adapter digest a grant pins. Adapters without it are version "1".
type Versioner interface {
	Version() string
}

// Call is one call of a Tool, ready to run: its definition, the Source it runs against
// (nil for a source-free Tool) and its arguments, checked against the Tool's params, with
// the reserved "source" argument removed.
type Call struct {
	Tool       contract.ToolID
	Def        Tool
	Source     *Source
	Args       contract.Args
	Invocation string // the Operation the work item runs; "" outside served work
}

// Status is what an Outcome says about the world.
type Status string

// Statuses of an Outcome.
const (
	StatusOK      Status = "ok"
	StatusRefused Status = "refused" // nothing happened
	StatusUnknown Status = "unknown" // the effect may or may not have happened
)

// Outcome is what one Execute did.
type Outcome struct {
	Status Status
	Rows   []contract.Args
	Code   contract.Code // set unless StatusOK
	Reason string        // a sentence safe to send; set unless StatusOK
}

// OK returns a successful Outcome with rows.
func OK(rows ...contract.Args) (Outcome, error) {
	if rows == nil {
		rows = []contract.Args{}
	}
	return Outcome{Status: StatusOK, Rows: rows}, nil
}

// Refuse returns the Outcome of a call that did nothing, and err. The code and reason come
// from the first *contract.Error in err's chain; other errors are summarised without
// their text, which may hold a secret.
func Refuse(err error) (Outcome, error) {
	code, reason := explain(err, contract.CodeToolFailed, "the tool failed before it had any effect; the cause is in the worker's log.")
	return Outcome{Status: StatusRefused, Code: code, Reason: reason}, err
}

// Unknown returns the Outcome of a call whose effect may have happened, and err.
func Unknown(err error) (Outcome, error) {
	code, reason := explain(err, contract.CodeEffectUnknown, "the tool failed after its effect may have happened; a person must check the target and reconcile the operation.")
	return Outcome{Status: StatusUnknown, Code: code, Reason: reason}, err
}

func explain(err error, code contract.Code, reason string) (contract.Code, string) {
	if e, ok := errors.AsType[*contract.Error](err); ok {
		return e.Code, e.Teaching
	}
	return code, reason
}
