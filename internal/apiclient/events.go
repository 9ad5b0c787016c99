package apiclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// Events calls each with the events of project after sequence number after, in order,
// page by page, until the end of the log. An error from each stops it and is returned.
func (c *Client) Events(ctx context.Context, project string, after int64, each func(contract.Event) error) error {
	return c.FilterEvents(ctx, project, after, nil, each)
}

// FilterEvents is [Client.Events] for the events the filters select: type (repeated),
// case, agent and since (RFC 3339), as the events route takes them.
func (c *Client) FilterEvents(ctx context.Context, project string, after int64, filters url.Values, each func(contract.Event) error) error {
	for {
		var page contract.Page[contract.Event]
		q := url.Values{}
		for k, v := range filters {
			q[k] = v
		}
		q.Set("after", strconv.FormatInt(after, 10))
		if err := c.Do(ctx, http.MethodGet, ProjectPath(project, "events")+"?"+q.Encode(), nil, &page); err != nil {
			return err
		}
		for _, ev := range page.Items {
			if err := each(ev); err != nil {
				return err
			}
			after = ev.Seq
		}
		if page.Next == "" {
			return nil
		}
		// A filtered page may be empty and still go on: its Next is the last event the
		// server looked at.
		if n, err := strconv.ParseInt(page.Next, 10, 64); err == nil && n > after {
			after = n
		} else if len(page.Items) == 0 {
			return nil
		}
	}
}

// FollowEvents calls each with the events of project after sequence number after, as
// the server streams them (server-sent events), until ctx ends, which is a normal end
// and returns nil. An error from each stops it and is returned.
func (c *Client) FollowEvents(ctx context.Context, project string, after int64, each func(contract.Event) error) error {
	path := "/api/v1/events?project=" + url.QueryEscape(project) + "&after=" + strconv.FormatInt(after, 10)
	resp, err := c.Send(ctx, http.MethodGet, path, nil, http.Header{"Accept": {"text/event-stream"}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read event stream: %w", err)
		}
		data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: ")
		if !ok {
			continue
		}
		var ev contract.Event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return fmt.Errorf("decode event: %w", err)
		}
		if err := each(ev); err != nil {
			return err
		}
	}
}
