package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// scheduleCmd makes and runs member schedules: a cron expression or an
// interval, in a zone, that posts a task for an Agent at each fire. docs/workbench.md has
// the missed-fire policies.
type scheduleCmd struct {
	Create scheduleCreateCmd `cmd:"" help:"Make a schedule that posts a task for an Agent at each fire."`
	List   scheduleListCmd   `cmd:"" help:"List the project's schedules with their next fire."`
	Show   scheduleShowCmd   `cmd:"" help:"Show a schedule: its next fire and its last fires with their tasks and outcomes."`
	Pause  schedulePauseCmd  `cmd:"" help:"Pause a schedule: it fires no more until resumed."`
	Resume scheduleResumeCmd `cmd:"" help:"Resume a paused schedule from now (what fell due while paused is not run)."`
	RunNow scheduleRunCmd    `cmd:"" name:"run-now" help:"Fire a schedule now, paused or not: one task for its Agent."`
	Delete scheduleDeleteCmd `cmd:"" help:"Delete a schedule; its fires stay on record."`
}

type scheduleCreateCmd struct {
	clientFlags
	Agent        string   `required:"" help:"The Agent each fire posts a task for (name or id)."`
	Cron         string   `xor:"when" required:"" help:"A cron expression: minute hour day-of-month month day-of-week (\"0 9 * * mon-fri\"), or @hourly, @daily, @weekly, @monthly."`
	Every        string   `xor:"when" required:"" help:"An interval instead: a duration such as 90s, 15m or 1h, counted from now."`
	TZ           string   `name:"tz" help:"The IANA time zone the cron expression is read in (default UTC)."`
	Missed       string   `enum:"skip,run_once" default:"skip" help:"What to do with fires missed while serve was down: skip them, or run_once when it is back."`
	Conversation string   `help:"The conversation each fire's task continues (default: a new one each fire)."`
	Text         []string `arg:"" help:"The task's text, given to the Agent at each fire."`
}

func (c *scheduleCreateCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	req := contract.CreateScheduleRequest{Cron: c.Cron, Every: c.Every, TimeZone: c.TZ, Missed: contract.MissedPolicy(c.Missed),
		Task: contract.TaskRequest{Agent: c.Agent, Text: strings.Join(c.Text, " "), Conversation: c.Conversation}}
	var s contract.Schedule
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "schedules"), req, &s); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, s)
	}
	_, err = fmt.Fprintf(e.Stdout, "schedule %s: %s for %s, next fire %s\n", s.ID, when(s), s.AgentName, nextFireText(s))
	return err
}

// when says how often s fires.
func when(s contract.Schedule) string {
	if s.Every != "" {
		return "every " + s.Every
	}
	return fmt.Sprintf("cron %q in %s", s.Cron, s.TimeZone)
}

// nextFireText is s's next fire in its zone, or why there is none.
func nextFireText(s contract.Schedule) string {
	if s.NextFire == nil {
		return "none (" + s.State + ")"
	}
	return inZone(*s.NextFire, s.TimeZone)
}

// inZone formats t in zone, falling back to UTC for a zone this machine lacks.
func inZone(t time.Time, zone string) string {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	return t.In(loc).Format(time.RFC3339)
}

type scheduleListCmd struct {
	clientFlags
}

func (c *scheduleListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	items, err := list[contract.Schedule](ctx, cl, projectPath(c.Project, "schedules"))
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, items)
	}
	rows := make([][]string, 0, len(items))
	for _, s := range items {
		rows = append(rows, []string{string(s.ID), s.AgentName, when(s), string(s.Missed), s.State, nextFireText(s)})
	}
	return writeList(e, []string{"id", "agent", "when", "missed", "state", "next fire"}, rows,
		"no schedules; docket schedule create --agent NAME --every 1h TEXT makes one")
}

type scheduleShowCmd struct {
	clientFlags
	ID string `arg:"" help:"The schedule's id (sch_…)."`
}

func (c *scheduleShowCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var s contract.Schedule
	if err := cl.do(ctx, http.MethodGet, projectPath(c.Project, "schedules", c.ID), nil, &s); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, s)
	}
	if _, err := fmt.Fprintf(e.Stdout, "schedule %s (%s)\n  agent      %s\n  when       %s\n  missed     %s\n  next fire  %s\n  task       %s\n  made by    %s at %s\n",
		s.ID, s.State, s.AgentName, when(s), s.Missed, nextFireText(s), s.Task.Text, s.CreatedBy, s.CreatedAt.Format(time.RFC3339)); err != nil {
		return err
	}
	if len(s.LastFires) == 0 {
		_, err := fmt.Fprintln(e.Stdout, "  no fires yet; docket schedule run-now "+string(s.ID)+" fires it now")
		return err
	}
	if _, err := fmt.Fprintln(e.Stdout, "  last fires (due, kind, task, outcome):"); err != nil {
		return err
	}
	for _, f := range s.LastFires {
		if _, err := fmt.Fprintf(e.Stdout, "    %s  %-8s  %s  %s%s\n", inZone(f.Due, s.TimeZone), f.Kind, orDash(string(f.Task)), f.Outcome, refusal(f)); err != nil {
			return err
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// refusal is why a fire made no task, with the code to look up.
func refusal(f contract.ScheduleFire) string {
	if f.ErrorCode == "" {
		return ""
	}
	return fmt.Sprintf(" (%s: %s)", f.ErrorCode, f.Teaching)
}

// scheduleActCmd is pause, resume and delete: one act on one schedule, no body.
type scheduleActCmd struct {
	clientFlags
	ID string `arg:"" help:"The schedule's id (sch_…)."`
}

type (
	schedulePauseCmd  struct{ scheduleActCmd }
	scheduleResumeCmd struct{ scheduleActCmd }
	scheduleDeleteCmd struct{ scheduleActCmd }
)

func (c *schedulePauseCmd) Run(ctx context.Context, e *env) error  { return c.act(ctx, e, "pause") }
func (c *scheduleResumeCmd) Run(ctx context.Context, e *env) error { return c.act(ctx, e, "resume") }
func (c *scheduleDeleteCmd) Run(ctx context.Context, e *env) error { return c.act(ctx, e, "delete") }

func (c *scheduleActCmd) act(ctx context.Context, e *env, verb string) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	method, path := http.MethodPost, projectPath(c.Project, "schedules", c.ID, verb)
	if verb == "delete" {
		method, path = http.MethodDelete, projectPath(c.Project, "schedules", c.ID)
	}
	var s contract.Schedule
	if err := cl.do(ctx, method, path, nil, &s); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, s)
	}
	if verb == "delete" {
		_, err = fmt.Fprintf(e.Stdout, "schedule %s deleted\n", s.ID)
		return err
	}
	_, err = fmt.Fprintf(e.Stdout, "schedule %s %sd; next fire %s\n", s.ID, verb, nextFireText(s))
	return err
}

type scheduleRunCmd struct {
	clientFlags
	ID string `arg:"" help:"The schedule's id (sch_…)."`
}

func (c *scheduleRunCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	var f contract.ScheduleFire
	if err := cl.do(ctx, http.MethodPost, projectPath(c.Project, "schedules", c.ID, "run"), nil, &f); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, f)
	}
	if f.Task == "" {
		return &contract.Error{Code: f.ErrorCode, Teaching: fmt.Sprintf("schedule %s fired but its task was refused: %s", c.ID, f.Teaching)}
	}
	_, err = fmt.Fprintf(e.Stdout, "schedule %s fired: task %s (%s)\n", c.ID, f.Task, f.Outcome)
	return err
}
