package contract_test

import (
	"testing"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

func TestCheckTaskRunWait(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	ok := contract.TaskRunWait{On: contract.RunWaitModel, Origin: "http://127.0.0.1:8080", Phase: contract.RunWaitFirstByte, Since: at, Deadline: at.Add(time.Minute)}
	tests := []struct {
		name string
		edit func(*contract.TaskRunWait)
		ok   bool
	}{
		{"a first-byte wait", func(*contract.TaskRunWait) {}, true},
		{"an idle wait on https", func(w *contract.TaskRunWait) { w.Phase, w.Origin = contract.RunWaitIdle, "https://api.example.com" }, true},
		{"on something else", func(w *contract.TaskRunWait) { w.On = "tool" }, false},
		{"an unknown phase", func(w *contract.TaskRunWait) { w.Phase = "thinking" }, false},
		{"an origin with a path", func(w *contract.TaskRunWait) { w.Origin = "http://h/v1/secret-token" }, false},
		{"an origin with credentials", func(w *contract.TaskRunWait) { w.Origin = "http://u:p@h" }, false},
		{"an origin with a query", func(w *contract.TaskRunWait) { w.Origin = "http://h?key=k" }, false},
		{"not http", func(w *contract.TaskRunWait) { w.Origin = "file:///etc" }, false},
		{"no since", func(w *contract.TaskRunWait) { w.Since = time.Time{} }, false},
		{"a retry wait", func(w *contract.TaskRunWait) {
			w.Phase, w.Attempt, w.Attempts, w.Reason = contract.RunWaitRetry, 2, 5, "rate limited (HTTP 429)"
		}, true},
		{"a retry wait for the first attempt", func(w *contract.TaskRunWait) { w.Phase, w.Attempt, w.Attempts = contract.RunWaitRetry, 1, 5 }, false},
		{"a retry wait past its bound", func(w *contract.TaskRunWait) { w.Phase, w.Attempt, w.Attempts = contract.RunWaitRetry, 6, 5 }, false},
		{"a retry reason too long", func(w *contract.TaskRunWait) {
			w.Phase, w.Attempt, w.Attempts, w.Reason = contract.RunWaitRetry, 2, 5, string(make([]byte, 201))
		}, false},
		{"an attempt on a first-byte wait", func(w *contract.TaskRunWait) { w.Attempt, w.Attempts = 2, 5 }, false},
		{"a deadline before since", func(w *contract.TaskRunWait) { w.Deadline = at.Add(-time.Second) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := ok
			tt.edit(&w)
			err := contract.CheckTaskRunWait(w)
			if (err == nil) != tt.ok || (err != nil && contract.CodeOf(err) != contract.CodeInvalidArgument) {
				t.Errorf("CheckTaskRunWait(%+v) = %v, want ok %v (else invalid_argument)", w, err, tt.ok)
			}
		})
	}
}
