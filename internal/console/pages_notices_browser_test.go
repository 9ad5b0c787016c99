package console_test

import (
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/notice"
	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/console/browsertest"
	"github.com/docketrun/docket/internal/signing"
)

// TestPages_Notices: a member subscribes a webhook on the Notices page (a URL that is not
// http is refused naming the field, the URL not shown back), sees it listed by its
// scheme://host/… only, sends a test notice that the receiver gets and the row then shows
// delivered, and unsubscribes it.
func TestPages_Notices(t *testing.T) {
	keys, err := signing.Generate(rand.Reader, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var notices *notice.Keeper
	s := newTestServerOn(t, authoritytest.Options{Signer: keys}, console.Config{}, func(a *authority.Authority, _ *authority.Operations, cfg *console.Config) {
		var err error
		if notices, err = authority.NewNotices(a, authority.NoticesConfig{PublicURL: "https://docket.example"}); err != nil {
			t.Fatal(err)
		}
		cfg.Notices = notices
	})
	var mu sync.Mutex
	var got []string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.Header.Get("Docket-Notice-Id"))
	}))
	t.Cleanup(rcv.Close)
	b := browsertest.New(t)
	b.SignIn(s.URL, "ada", testPassphrase)
	b.Do(chromedp.Navigate(s.URL+"/projects/default/notices"), chromedp.WaitVisible(chromedp.ID("notice-subscribe")))
	if text := b.Text("#subscriptions"); !strings.Contains(text, "No subscription yet") {
		t.Errorf("an empty Notices page reads %q", text)
	}
	subscribe := func(url string) {
		t.Helper()
		b.Do(chromedp.SetValue(chromedp.ID("notice-webhook"), url),
			chromedp.Click(chromedp.ID("notice-subscribe")), chromedp.WaitVisible(chromedp.CSS(".notice, #notice-error")))
	}
	subscribe("ftp://hooks.example.com/services/pagesecret")
	if text := b.Text("#notice-error"); !strings.Contains(text, "webhook: give an absolute http or https URL") {
		t.Errorf("a ftp webhook is refused with %q, want the field named", text)
	}
	if html := b.Text("main"); strings.Contains(html, "pagesecret") {
		t.Errorf("the refused URL is shown back: %q", html)
	}
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Notices page with a refusal: %q", ps)
	}
	subscribe(rcv.URL + "/services/pagesecret")
	if text := b.Text(".notice"); !strings.Contains(text, "Subscribed") {
		t.Fatalf("after subscribing, the notice is %q", text)
	}
	row := b.Text("#subscriptions")
	if !strings.Contains(row, "webhook: "+rcv.URL+"/…") || !strings.Contains(row, "request, card") || strings.Contains(row, "pagesecret") {
		t.Errorf("the subscription's row reads %q", row)
	}
	subs, err := notices.Subscriptions(t.Context(), mustCaller(t, s), "default")
	if err != nil || len(subs) != 1 {
		t.Fatalf("subscriptions = %+v, %v", subs, err)
	}
	id := subs[0].ID
	// Sent waits for the page the form answers with: the Subscribed notice is still shown
	// until then.
	b.Sent(chromedp.Click(chromedp.ID("test-" + id)))
	b.Do(chromedp.WaitVisible(chromedp.CSS(".notice")))
	if text := b.Text(".notice"); !strings.Contains(text, "test notice is on its way") {
		t.Errorf("after Send a test, the notice is %q", text)
	}
	if err := notices.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(got) != 1 || !strings.HasPrefix(got[0], "ntc_") {
		t.Errorf("the receiver got %q, want one notice", got)
	}
	mu.Unlock()
	b.Do(chromedp.Navigate(s.URL+"/projects/default/notices"), chromedp.WaitVisible(chromedp.ID("sub-"+id)))
	if text := b.Text("#sub-" + id + " .last-state"); !strings.Contains(text, "delivered") {
		t.Errorf("the last delivery reads %q, want delivered", text)
	}
	if ps := b.A11yProblems(); len(ps) > 0 {
		t.Errorf("Notices page: %q", ps)
	}
	b.Do(chromedp.Click(chromedp.ID("unsubscribe-"+id)), chromedp.WaitVisible(chromedp.CSS(".notice")))
	if text := b.Text("#subscriptions"); !strings.Contains(text, "No subscription yet") {
		t.Errorf("after unsubscribing, the list reads %q", text)
	}
}
