package authority

import "github.com/docketrun/docket/internal/contract"

// BoardBuilds reports how often a's Board of project was built from the store, so tests
// can show that a fresh Board is kept and a stale one rebuilt.
func (a *Authority) BoardBuilds(project contract.ProjectID) int {
	pb := a.boards.get(project)
	pb.mu.Lock()
	defer pb.mu.Unlock()
	return pb.builds
}
