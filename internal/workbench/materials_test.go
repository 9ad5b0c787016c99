package workbench

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestMaterialAdder_Refusals: the Add files route refuses what is not its form, before
// any byte is written to the material area.
func TestMaterialAdder_Refusals(t *testing.T) {
	area := t.TempDir()
	m := &materialAdder{rts: &runtimes{cfg: Config{Stderr: io.Discard}}, token: "the-token",
		xorigin: http.NewCrossOriginProtection()}
	m.area.Dir = area
	form := func(fields map[string]string, file string) (*bytes.Buffer, string) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for _, k := range []string{"csrf", "agent"} {
			if v, ok := fields[k]; ok {
				if err := mw.WriteField(k, v); err != nil {
					t.Fatal(err)
				}
			}
		}
		w, err := mw.CreateFormFile("files", "plan.txt")
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(file))
		mw.Close()
		return &b, mw.FormDataContentType()
	}
	send := func(program bool, method, ctype string, body io.Reader, header map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "http://127.0.0.1:7420"+MaterialsPath, body)
		if ctype != "" {
			r.Header.Set("Content-Type", ctype)
		}
		for k, v := range header {
			r.Header.Set(k, v)
		}
		if program {
			r = r.WithContext(context.WithValue(r.Context(), byHeaderKey{}, true))
		}
		w := httptest.NewRecorder()
		m.ServeHTTP(w, r)
		return w
	}

	if w := send(true, http.MethodGet, "", nil, nil); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET = %d, want 405", w.Code)
	}
	if w := send(true, http.MethodPost, "application/x-www-form-urlencoded", strings.NewReader("agent=calc"), nil); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "unsupported_media") {
		t.Errorf("a urlencoded body = %d %s, want 400 unsupported_media", w.Code, w.Body)
	}
	body, ct := form(map[string]string{"agent": "calc", "csrf": "wrong"}, "SECRET-BYTES")
	if w := send(false, http.MethodPost, ct, body, nil); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "CSRF") {
		t.Errorf("a page's form with a wrong token = %d %s, want 403 naming the CSRF token", w.Code, w.Body)
	}
	body, ct = form(map[string]string{"agent": "calc", "csrf": "the-token"}, "SECRET-BYTES")
	if w := send(false, http.MethodPost, ct, body, map[string]string{"Sec-Fetch-Site": "cross-site"}); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "cross_origin") {
		t.Errorf("a form from another origin = %d %s, want 403 cross_origin", w.Code, w.Body)
	}
	body, ct = form(map[string]string{}, "SECRET-BYTES")
	if w := send(true, http.MethodPost, ct, body, nil); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "name the Agent") {
		t.Errorf("files without an agent = %d %s, want 400 naming the field", w.Code, w.Body)
	}
	if ents, err := os.ReadDir(area); err != nil || len(ents) != 0 {
		t.Errorf("the material area after refusals holds %v (%v), want nothing", ents, err)
	}
}
