package console_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

// midReadAuthority is the real authority with an event appended while a page reads an
// Agent's tasks: a runtime's report that lands between the page's reads.
type midReadAuthority struct {
	*authority.Authority
	during func(ctx context.Context)
}

func (m midReadAuthority) Tasks(ctx context.Context, c identity.Caller, project contract.ProjectID, agent string) ([]contract.Task, error) {
	ts, err := m.Authority.Tasks(ctx, c, project, agent)
	if err == nil && m.during != nil {
		m.during(ctx)
	}
	return ts, err
}

// TestPages_StreamStartsBeforeTheRead: an event committed while a page is being read
// reaches the page's stream. The page shows what it read; its stream (data-after) starts
// at the head read before that, so a task posted mid-read is sent to it instead of
// falling between the read and the head, which left a page waiting on a task's end it
// would never be told of.
func TestPages_StreamStartsBeforeTheRead(t *testing.T) {
	var posted int64
	s := newTestServerWith(t, console.Config{}, func(a *authority.Authority, _ *authority.Operations, cfg *console.Config) {
		once := false
		cfg.Authority = midReadAuthority{Authority: a, during: func(ctx context.Context) {
			if once {
				return
			}
			once = true
			ada, err := a.Directory().Login(ctx, "ada", testPassphrase, 0)
			if err != nil {
				t.Error(err)
				return
			}
			c, err := a.Directory().Authenticate(ctx, ada.Token)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := a.PostTask(ctx, c, "default", contract.TaskRequest{Agent: "calc", Text: "Verify job calc-001."}); err != nil {
				t.Error(err)
				return
			}
			h, err := a.LogHead(ctx, c, "default")
			if err != nil {
				t.Error(err)
			}
			posted = h
		}}
	})
	ag, err := s.a.Directory().CreateAgent(t.Context(), mustCaller(t, s), "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.a.Directory().Login(t.Context(), "ada", testPassphrase, 0)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := s.do(t, request{method: "GET", path: "/projects/default/agents/" + string(ag.Agent.ID), cookie: sess.Token.String()})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the Agent's page = %d\n%s", resp.StatusCode, body)
	}
	m := regexp.MustCompile(`data-after="(\d+)"`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("the Agent's page has no data-after:\n%s", body)
	}
	after, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if posted == 0 || after >= posted {
		t.Errorf("the page's stream starts after event %d; the task posted while it was read is event %d, which it would never be sent", after, posted)
	}
}
