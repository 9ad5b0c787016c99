package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
)

// artifactKeeper keeps the tool results an Agent's runtime cut to its inline bound, as
// artifacts ReadArtifact reads (docs/mcp.md, "Artifacts"). *operation.Operations
// satisfies it.
type artifactKeeper interface {
	PutArtifact(ctx context.Context, c identity.Caller, content []byte) (contract.ArtifactRef, error)
}

// maxArtifactBody bounds POST /api/v1/artifacts: the largest artifact, with room for the
// JSON escapes of its text and the envelope around it.
const maxArtifactBody = 2*contract.MaxArtifactBytes + 64<<10

func (s *Server) artifactRoutes() {
	if s.arts == nil {
		return
	}
	s.handle("POST /api/v1/artifacts", s.handlePutArtifact, authed)
}

// handlePutArtifact keeps a tool result as an artifact of the calling Agent.
func (s *Server) handlePutArtifact(w http.ResponseWriter, r *http.Request) error {
	put, err := decodeJSON[contract.ArtifactPut](w, r, maxArtifactBody)
	if err != nil {
		return err
	}
	ref, err := s.arts.PutArtifact(r.Context(), caller(r), []byte(put.Content))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, ref)
}
