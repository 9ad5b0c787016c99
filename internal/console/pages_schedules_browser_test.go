package console_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/contract"
)

// TestPages_Schedules: a member makes a schedule on the Schedules page (a bad cron
// expression is refused naming its field, the form kept), runs it now and sees the fire
// with its task, pauses and resumes it; a one-second schedule's fires appear live as the
// sweep makes them; a deleted schedule leaves the list.
func TestPages_Schedules(t *testing.T) {
	r := newPagesRig(t)
	ctx, cancel := context.WithCancel(t.Context())
	var sweep sync.WaitGroup
	sweep.Go(func() {
		if err := r.sched.Run(ctx); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(func() { cancel(); sweep.Wait() })
	r.signIn(t)
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/schedules"), chromedp.WaitVisible(chromedp.ID("schedule-create")))
	if got := r.b.Text("#schedules"); !strings.Contains(got, "No schedule yet") {
		t.Errorf("an empty Schedules page reads %q", got)
	}

	create := func(when, zone, text string) {
		t.Helper()
		r.b.Do(chromedp.SetValue(chromedp.ID("schedule-when"), when), chromedp.SetValue(chromedp.ID("schedule-zone"), zone),
			chromedp.SetValue(chromedp.ID("schedule-missed"), "run_once"), chromedp.SetValue(chromedp.ID("schedule-text"), text),
			chromedp.Click(chromedp.ID("schedule-create")), chromedp.WaitVisible(chromedp.CSS(".notice, #schedule-error")))
	}
	create("0 25 * * *", "Europe/Berlin", "Send the morning report.")
	if got := r.b.Text("#schedule-error"); !strings.Contains(got, `the hour "25"`) {
		t.Errorf("a bad hour is refused with %q, want the field named", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Schedules page with a refusal: %q", ps)
	}
	create("0 9 * * mon-fri", "Europe/Berlin", "Send the morning report.")
	if got := r.b.Text(".notice"); !strings.Contains(got, "Schedule made") {
		t.Fatalf("after making it, the notice is %q", got)
	}
	list, err := r.sched.Schedules(t.Context(), mustCaller(t, r.testServer), "default")
	if err != nil || len(list) != 1 || list[0].Cron != "0 9 * * mon-fri" || list[0].TimeZone != "Europe/Berlin" || list[0].Missed != contract.MissedRunOnce {
		t.Fatalf("schedules after the form = %+v, %v", list, err)
	}
	id := string(list[0].ID)
	if got := r.b.Text("#schedules"); !strings.Contains(got, "0 9 * * mon-fri in Europe/Berlin") || !strings.Contains(got, "active") {
		t.Errorf("the schedule's row reads %q", got)
	}

	r.b.Do(chromedp.Click(chromedp.ID("run-"+id)), chromedp.WaitVisible(chromedp.Search(`//tbody[@id="fires"]/tr[td[@data-label="Kind"][text()="run_now"]]`)))
	if got := r.b.Text(".notice"); !strings.Contains(got, "Schedule fired: its task is posted") {
		t.Errorf("after run now, the notice is %q", got)
	}
	if got := r.b.Text("#fires"); !strings.Contains(got, "run_now") || !strings.Contains(got, "posted") {
		t.Errorf("the fires read %q, want the run_now fire posted", got)
	}
	r.b.Do(chromedp.Click(chromedp.ID("pause-"+id)), chromedp.WaitVisible(chromedp.ID("resume-"+id)))
	if got := r.b.Text("#schedules"); !strings.Contains(got, "paused") {
		t.Errorf("after pause the row reads %q", got)
	}
	r.b.Do(chromedp.Click(chromedp.ID("resume-"+id)), chromedp.WaitVisible(chromedp.ID("pause-"+id)))

	// A one-second schedule: its fires come in live while the page is open.
	every, err := r.sched.Create(t.Context(), mustCaller(t, r.testServer), "default", contract.CreateScheduleRequest{Every: "1s",
		Task: contract.TaskRequest{Agent: "calc", Text: "Tidy the workspace."}})
	if err != nil {
		t.Fatal(err)
	}
	r.b.Do(chromedp.Navigate(r.URL+"/projects/default/schedules/"+string(every.ID)), chromedp.WaitVisible(chromedp.ID("fires-h")),
		chromedp.WaitVisible(chromedp.Search(`//tbody[@id="fires"]/tr[td[@data-label="Kind"][text()="due"]]`)))
	if got := r.b.Text("#fires"); !strings.Contains(got, "t-") || !strings.Contains(got, "posted") {
		t.Errorf("the live fires read %q, want a due fire with its task", got)
	}
	if ps := r.b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Schedules page: %q", ps)
	}
	r.b.Screenshot(screenshots, "schedules")

	r.b.Do(chromedp.Click(chromedp.ID("delete-"+string(every.ID))), chromedp.WaitNotPresent(chromedp.ID("delete-"+string(every.ID))))
	if got := r.b.Text("#schedules"); strings.Contains(got, string(every.ID)) || !strings.Contains(got, id) {
		t.Errorf("after delete the list reads %q, want only %s", got, id)
	}
}
