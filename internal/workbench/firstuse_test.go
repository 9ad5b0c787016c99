package workbench

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

func newFirstUse() *firstUse {
	return &firstUse{rts: newRuntimes(Config{}), runKey: "RUNKEY", xorigin: http.NewCrossOriginProtection()}
}

func formRequest(body, contentType string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7420"+ModelPath, strings.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	return r
}

// TestFirstUse_Decode: the form is read strictly, and each refusal has its code.
func TestFirstUse_Decode(t *testing.T) {
	f := newFirstUse()
	ok := "csrf=" + f.csrf() + "&agent=a&provider=openai&url=http%3A%2F%2F127.0.0.1%3A1&model=m&key="
	tests := []struct {
		name, body, contentType string
		want                    contract.Code // "" admits it
	}{
		{"the page's form", ok, "application/x-www-form-urlencoded", ""},
		{"JSON", `{"agent":"a"}`, "application/json", contract.CodeUnsupportedMedia},
		{"no CSRF token", strings.Replace(ok, "csrf="+f.csrf(), "csrf=", 1), "application/x-www-form-urlencoded", contract.CodeCSRF},
		{"another run's token", strings.Replace(ok, f.csrf(), csrfFor("OTHER"), 1), "application/x-www-form-urlencoded", contract.CodeCSRF},
		{"unknown field", ok + "&admin=1", "application/x-www-form-urlencoded", contract.CodeInvalidArgument},
		{"repeated field", ok + "&model=n", "application/x-www-form-urlencoded", contract.CodeInvalidArgument},
		{"bad escape", ok + "&%zz", "application/x-www-form-urlencoded", contract.CodeInvalidArgument},
		{"over the bound", ok + "&model=" + strings.Repeat("m", maxFormBody), "application/x-www-form-urlencoded", contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.decode(httptest.NewRecorder(), formRequest(tt.body, tt.contentType))
			if got := contract.CodeOf(err); got != tt.want {
				t.Errorf("decode = %v, want code %q", err, tt.want)
			}
		})
	}
}

// csrfFor is the form's token under another run's key.
func csrfFor(key string) string { return (&firstUse{runKey: key}).csrf() }

// FuzzFirstUse_Decode: any body is either admitted or refused with a code and a
// teaching, never a panic.
func FuzzFirstUse_Decode(f *testing.F) {
	fu := newFirstUse()
	f.Add("csrf=" + fu.csrf() + "&agent=a&provider=openai&url=&model=m&key=")
	f.Add("agent=a&agent=b")
	f.Add("%")
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		_, err := fu.decode(httptest.NewRecorder(), formRequest(body, "application/x-www-form-urlencoded"))
		if err == nil {
			return
		}
		ce, ok := errors.AsType[*contract.Error](err)
		if !ok || ce.Code == "" || ce.Teaching == "" {
			t.Fatalf("decode(%q) = %v, want a refusal with a code and a teaching", body, err)
		}
	})
}
