package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// TestGateway_PollReadsTheHeadAlone: an Agent that polls QueryBoard costs the store one
// read per poll, the head of its project's log: its token is proved again at that head
// from the log's credential events, and the poll is answered at it. The Agent revoked
// (here, or by another serve: identity's TestAgentAt_ProvedAgainFromTheLog), the next
// request is refused at the door (HTTP 401).
func TestGateway_PollReadsTheHeadAlone(t *testing.T) {
	f := newFixture(t, time.Second)
	cs := f.connect(t, nil)
	if res, _ := call(t, cs, "ApplyBatch", batchOf("seen")); !res.Accepted {
		t.Fatalf("ApplyBatch = %+v, want accepted", res)
	}
	poll := contract.QueryBoardInput{Pattern: &contract.Atom{Predicate: "seen", Args: contract.Args{"x": str("?x")}}}
	call(t, cs, "QueryBoard", poll) // the token's first proof since the write
	f.count.Reset()
	const polls = 5
	for range polls {
		if res, _ := call(t, cs, "QueryBoard", poll); !res.Accepted {
			t.Fatalf("QueryBoard = %+v, want accepted", res)
		}
	}
	if n := f.count.Counts(); n.Calls != polls || n.HeadReads != polls {
		t.Errorf("%d polls made %d store calls, %d of them head reads (%v); want one head read each and nothing else", polls, n.Calls, n.HeadReads, n.ByMethod)
	}
	if _, err := f.a.Directory().RevokeAgent(t.Context(), f.admin, "default", "calc"); err != nil {
		t.Fatal(err)
	}
	if _, err := callErr(cs, "QueryBoard", poll); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("QueryBoard after the Agent was revoked = %v, want it refused Unauthorized", err)
	}
}
