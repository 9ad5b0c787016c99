package e2e

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/workbench"
)

// workbenchShots is where these tests write the screenshots docs/workbench.md shows.
const workbenchShots = "../../../docs/workbench"

// TestStart_FirstUseForm: the browser's first visit to docket start's URL asks for the
// default model. The form is served by docket start itself behind the run key; the key
// typed into it goes into the Agent's 0600 key file beside its runtime and nowhere else
// (not the store, an event, a log or the output), the non-secret profile to the
// authority, and the Agent's runtime starts on it. The form refuses a missing CSRF token,
// another origin, unknown or repeated fields, and a remote model without a key; a
// loopback OpenAI-compatible server needs none.
func TestStart_FirstUseForm(t *testing.T) {
	t.Parallel() // a long process test that mostly waits: it runs beside the other long ones
	const secret = "sk-ant-form-SECRET-9a8b7c6d"
	s := newStartEnv(t)
	start, addr, key := s.run(t, "--listen", "127.0.0.1:0")
	s.setUpCalculation(t, verifiedCalculation)
	an := providertest.NewAnthropic(t, calcScript(t, "calc-001"), secret)
	b := browsertest.New(t)
	b.Do(chromedp.Navigate("http://"+addr+"/?key="+key), chromedp.WaitVisible(chromedp.CSS("form.signin input#model")))
	if got := b.Text("h1"); got != "Choose the default model" {
		t.Fatalf("the first visit shows %q, want the first-use form", got)
	}
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("first-use form: %q", ps)
	}
	b.Screenshot(workbenchShots, "first-use-model")
	b.Do(chromedp.SetValue(chromedp.CSS("#provider"), "anthropic"),
		chromedp.SendKeys(chromedp.CSS("#url"), an.URL),
		chromedp.SendKeys(chromedp.CSS("#model"), "claude-test"),
		chromedp.SendKeys(chromedp.CSS("#key"), secret),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("form.signin input#passphrase"))) // the console's sign-in, past the form

	ps := s.profiles(t, "the assistant's runtime running", running(workbench.DefaultAgent))
	p := ps[workbench.DefaultAgent]
	want := contract.ProfileSpec{Provider: "anthropic", ModelURL: an.URL, Model: "claude-test", Enabled: true,
		KeyFile: filepath.Join(workbench.AgentsDir, string(p.Agent), workbench.ModelKeyFile)}
	if p.ProfileSpec != want {
		t.Errorf("profile %+v, want %+v", p.ProfileSpec, want)
	}
	kf := filepath.Join(s.home, p.KeyFile)
	if b, err := os.ReadFile(kf); err != nil || strings.TrimSpace(string(b)) != secret {
		t.Errorf("key file %s = %q (%v), want the key typed in", kf, b, err)
	}
	if fi, err := os.Stat(kf); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v (%v), want 0600", fi.Mode(), err)
	}
	if a := s.task(t, p.Agent, "Run the verified calculation for job calc-001."); len(a.ClosedCases) != 1 || a.ClosedCases[0].Disposition != contract.DispositionCompleted {
		t.Errorf("the form's Agent's task = %+v, want its Case closed completed", a)
	}

	// The form's refusals, sent as a script would, with the browser's cookie.
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	cl := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := "http://" + addr
	if resp, err := cl.Get(base + "/?key=" + key); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	page, err := cl.Get(base + workbench.ModelPath)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, page)
	csrf := between(body, `name="csrf" value="`, `"`)
	if csrf == "" {
		t.Fatalf("the form carries no CSRF token:\n%s", body)
	}
	oa := providertest.NewOpenAI(t, calcScript(t, "calc-002"), "")
	form := func(kv ...string) url.Values {
		v := url.Values{"csrf": {csrf}, "agent": {"local"}, "provider": {"openai"}, "url": {oa.URL + "/v1"}, "model": {"m"}, "key": {""}}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "\x00" {
				v.Del(kv[i])
			} else {
				v.Set(kv[i], kv[i+1])
			}
		}
		return v
	}
	tests := []struct {
		name   string
		body   string
		origin string
		status int
		want   string
	}{
		{"no CSRF token", form("csrf", "\x00").Encode(), "", 403, "csrf_token"},
		{"another origin", form().Encode(), "http://evil.example", 403, "cross_origin"},
		{"an unknown field", form().Encode() + "&admin=1", "", 400, "no field"},
		{"a repeated field", form().Encode() + "&model=n", "", 400, "sent 2 times"},
		{"a remote model without a key", form("url", "https://models.example/v1").Encode(), "", 400, "needs a key"},
		{"a loopback OpenAI-compatible server needs no key", form().Encode(), base, 303, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+workbench.ModelPath, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, resp)
			if resp.StatusCode != tt.status || !strings.Contains(got, tt.want) {
				t.Errorf("POST %s = %d %s, want %d with %q", workbench.ModelPath, resp.StatusCode, got, tt.status, tt.want)
			}
		})
	}
	ps = s.profiles(t, "the key-less local Agent running", running("local"))
	if kf := ps["local"].KeyFile; kf != "" {
		t.Errorf("the loopback profile names key file %q, want none", kf)
	}
	s.stop(t, start)
	assertNoSecret(t, secret, s.home, start.log())
	if ps := b.Problems(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %q", ps)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}
