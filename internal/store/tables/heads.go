package tables

import (
	"maps"

	"github.com/docketrun/docket/internal/store"
)

// HeadCache remembers the heads of the logs that one exclusive writer committed, so that
// its next transactions start appending without reading event_heads. The zero value is
// empty and ready. It is not safe for concurrent use: the writer's lock guards it.
//
// A cached head is never ahead of the database: it is recorded only after its commit
// succeeded, and events are never removed. It may be behind, when another process on the
// same database appended since. Then the event at the cached head's seq+1 exists, so the
// next INSERT fails on the primary key (project, seq); [Tx.Append] then reads the head
// and links again. So the cache needs no check of its own, and a stale entry costs one
// refused INSERT, never a gap or a fork in the chain.
type HeadCache struct {
	m map[string]store.Head
}

// CommitBatch records the heads that b's calls appended to. Call it only after b's
// transaction committed.
func (c *HeadCache) CommitBatch(b *Batch) {
	if len(b.heads) == 0 {
		return
	}
	if c.m == nil {
		c.m = make(map[string]store.Head, len(b.heads))
	}
	maps.Copy(c.m, b.heads)
}

// Reset forgets every head, after the database was changed behind the writer's back.
func (c *HeadCache) Reset() { clear(c.m) }

func (c *HeadCache) get(project string) (store.Head, bool) {
	if c == nil {
		return store.Head{}, false
	}
	h, ok := c.m[project]
	return h, ok
}
