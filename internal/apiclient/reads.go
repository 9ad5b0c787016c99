package apiclient

import (
	"context"
	"net/http"
	"net/url"

	"github.com/docketrun/docket/internal/contract"
)

// Why returns the derivation tree of a Board node of project.
func (c *Client) Why(ctx context.Context, project, node string) (contract.Why, error) {
	return doOne[contract.Why](ctx, c, http.MethodGet, ProjectPath(project, "nodes", node, "why"), nil)
}

// CaseDetail returns one Case of project with its receipt, acceptance, derivation tree
// and facts.
func (c *Client) CaseDetail(ctx context.Context, project, id string) (contract.CaseDetail, error) {
	return doOne[contract.CaseDetail](ctx, c, http.MethodGet, ProjectPath(project, "cases", id), nil)
}

// Operations lists project's Operations: agent (an id or a name) keeps one Agent's, and
// waiting only those waiting for a worker, a decision or a person.
func (c *Client) Operations(ctx context.Context, project, agent string, waiting bool) ([]contract.OperationInfo, error) {
	q := url.Values{}
	if agent != "" {
		q.Set("agent", agent)
	}
	if waiting {
		q.Set("waiting", "1")
	}
	path := ProjectPath(project, "operations")
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return All[contract.OperationInfo](ctx, c, path)
}

// Workers lists project's live Connections with their lease, Tools and Sources.
func (c *Client) Workers(ctx context.Context, project string) ([]contract.WorkerStatus, error) {
	return All[contract.WorkerStatus](ctx, c, ProjectPath(project, "workers"))
}

// Conversations lists the conversations of project's Agent agent, every page.
func (c *Client) Conversations(ctx context.Context, project, agent string) ([]contract.ConversationSummary, error) {
	return All[contract.ConversationSummary](ctx, c, ProjectPath(project, "conversations")+"?"+url.Values{"agent": {agent}}.Encode())
}

// Conversation returns one conversation of project's Agent agent, with its messages.
func (c *Client) Conversation(ctx context.Context, project, agent, id string) (contract.Conversation, error) {
	return doOne[contract.Conversation](ctx, c, http.MethodGet, ProjectPath(project, "agents", agent, "conversations", id), nil)
}
