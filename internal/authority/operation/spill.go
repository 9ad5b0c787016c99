package operation

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
)

// spillRows keeps each string of a worker's rows that is over the inline bound
// ([contract.MaxStringBytes], the most one value of a fact holds) as an artifact of the
// Agent whose call the rows answer, in the same commit as the report, and puts its ref in
// the row in its place: the fact the Action returns holds "art_…", and the model reads the
// whole value with ReadArtifact (docs/mcp.md, "Artifacts"). The bytes go from the worker
// to the authority's store directly, never through the agent's runtime. Rows without
// such a string are returned as they are. Each artifact is kept for the retention of
// project's artifact policy in force.
func (o *Operations) spillRows(ctx context.Context, wc *workCommit, project contract.ProjectID, agent string, rows []contract.Args) ([]contract.Args, error) {
	var out []contract.Args
	var keep time.Duration // the project's retention, read at the first value kept
	copied := make([]bool, len(rows))
	for i, row := range rows {
		for col, v := range row {
			if v.Kind() != contract.ValueString || len(v.Str()) <= contract.MaxStringBytes {
				continue
			}
			content := []byte(v.Str())
			if len(content) > contract.MaxArtifactBytes {
				return nil, contract.Errorf(contract.CodeArtifactTooLarge,
					"column %s of row %d is %d bytes, over the artifact bound of %d; return a smaller value", col, i, len(content), contract.MaxArtifactBytes)
			}
			if out == nil {
				out = make([]contract.Args, len(rows))
				copy(out, rows)
			}
			if !copied[i] {
				out[i] = make(contract.Args, len(row))
				for k, x := range row {
					out[i][k] = x
				}
				copied[i] = true
			}
			h := store.Hash(contract.Sum(content))
			ref := artifactRef(agent, h)
			if keep == 0 {
				var err error
				if keep, err = o.retention(ctx, wc.l, project); err != nil {
					return nil, err
				}
			}
			expires := wc.now.Add(keep)
			wc.writes = append(wc.writes, func(tx store.Tx) error {
				_, err := tx.PutBlob(ctx, content)
				return err
			})
			if err := wc.event("", string(wc.opBy),
				event.ArtifactIssuedData{Ref: ref, Agent: agent, Hash: h.String(), Size: int64(len(content)), ExpiresAt: expires}); err != nil {
				return nil, fmt.Errorf("keep column %s of row %d as an artifact: %w", col, i, err)
			}
			out[i][col] = contract.StringValue(ref)
		}
	}
	if out == nil {
		return rows, nil
	}
	return out, nil
}
