package boards

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// decisionKeyPrefix names a decisions row in a [ProjectionError]: "decision:<request id>".
const decisionKeyPrefix = "decision:"

// decided is a decision as the log records it: the first request.changed event of a
// Request that names who decided it, written in the transaction that wrote the decisions
// row (docs/provability.md). A Request expired at its decision names nobody.
type decided struct {
	seq         int64
	digest      string
	requestedBy string
	decidedBy   string
	verdict     string
	at          time.Time
}

// applyRequest records the decision e names, if it is the first of its Request.
func (st *logState) applyRequest(e store.Event, project contract.ProjectID) error {
	var req contract.Request
	if err := json.Unmarshal(e.Data, &req); err != nil {
		return fmt.Errorf("decode request at seq %d of %s: %w", e.Seq, project, err)
	}
	if req.DecidedBy == "" || req.DecidedAt == nil {
		return nil
	}
	if _, ok := st.decisions[string(req.ID)]; ok {
		return nil // a later change (void, served) of a Request decided before
	}
	verdict := contract.VerdictApprove
	if req.State == contract.RequestDenied {
		verdict = contract.VerdictDeny
	}
	st.decisions[string(req.ID)] = decided{seq: e.Seq, digest: req.Digest, requestedBy: string(req.RequestedBy),
		decidedBy: string(req.DecidedBy), verdict: string(verdict), at: *req.DecidedAt}
	return nil
}

// checkDecisions compares the decisions table with the decisions the log records and
// returns a *[ProjectionError] naming the first row, in request order, that disagrees: a
// decider, verdict, digest, requester or time the log does not say, a row the log never
// decided, or a decision the log holds with no row.
func checkDecisions(ctx context.Context, r store.Reader, project contract.ProjectID, want map[string]decided) error {
	rows, err := r.Decisions(ctx, string(project))
	if err != nil {
		return fmt.Errorf("load decisions of %s: %w", project, err)
	}
	seen := make(map[string]bool, len(rows))
	for _, row := range rows {
		seen[row.Request] = true
		broken := func(seq int64, field, w, g string) error {
			return &ProjectionError{Project: project, Seq: seq, Node: decisionKeyPrefix + row.Request, Field: field, Want: w, Got: g}
		}
		w, ok := want[row.Request]
		if !ok {
			return broken(0, "extra", "no decision", "a row decided by "+row.DecidedBy)
		}
		for _, f := range []struct{ name, want, got string }{
			{"decidedBy", w.decidedBy, row.DecidedBy},
			{"verdict", w.verdict, row.Verdict},
			{"digest", w.digest, row.Digest},
			{"requestedBy", w.requestedBy, row.RequestedBy},
		} {
			if f.want != f.got {
				return broken(w.seq, f.name, f.want, f.got)
			}
		}
		if !w.at.Equal(row.At) {
			return broken(w.seq, "at", w.at.UTC().Format(time.RFC3339Nano), row.At.UTC().Format(time.RFC3339Nano))
		}
	}
	var missing []string
	for id := range want {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		w := want[missing[0]]
		return &ProjectionError{Project: project, Seq: w.seq, Node: decisionKeyPrefix + missing[0], Field: "missing",
			Want: "a row decided by " + w.decidedBy, Got: "no row"}
	}
	return nil
}
