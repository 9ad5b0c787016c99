package console

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// compactionBackend is the part of the authority that keeps conversations' compactions
// (docs/workbench.md, "Long conversations"). *authority.Authority satisfies it; an
// authority without it serves no compaction routes.
type compactionBackend interface {
	RecordCompaction(ctx context.Context, c identity.Caller, id contract.ConversationID, cp contract.ConversationCompaction) (contract.Compacted, error)
	CompactedMessages(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string, id contract.ConversationID, digest contract.Digest) ([]json.RawMessage, error)
}

// maxCompactionBody bounds a compaction record: the replaced messages and the summary,
// with room for the envelope.
const maxCompactionBody = contract.MaxCompactedBytes + contract.MaxSummaryBytes + 64<<10

func (s *Server) compactionRoutes() {
	cb, ok := s.auth.(compactionBackend)
	if !ok {
		return
	}
	s.handle("POST /api/v1/conversations/{conversation}/compactions", func(w http.ResponseWriter, r *http.Request) error {
		req, err := decodeJSON[contract.ConversationCompaction](w, r, maxCompactionBody)
		if err != nil {
			return err
		}
		rec, err := cb.RecordCompaction(r.Context(), caller(r), conversation(r), req)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, rec)
	}, authed)
	s.handle("GET /api/v1/projects/{project}/agents/{agent}/conversations/{conversation}/compactions/{digest}", func(w http.ResponseWriter, r *http.Request) error {
		d, err := contract.ParseDigest(r.PathValue("digest"))
		if err != nil {
			return contract.Errorf(contract.CodeInvalidArgument, "%q is not a digest sha256:<64 hex>; use one a compaction of the conversation names", r.PathValue("digest"))
		}
		msgs, err := cb.CompactedMessages(r.Context(), caller(r), project(r), r.PathValue("agent"), conversation(r), d)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"digest": d, "messages": msgs})
	}, authed)
}
