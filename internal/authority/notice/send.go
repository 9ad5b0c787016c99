package notice

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/authority/eventlog"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/store"
)

// HeaderID is the header (and, in an e-mail, the field) that carries a notice's id: the
// same on every attempt, so a receiver that got it once drops a repeat.
const HeaderID = "Docket-Notice-Id"

// SignatureLabel and SignatureTag are the label and tag of a webhook's signature.
const (
	SignatureLabel = "docket"
	SignatureTag   = "docket-notice"
)

// Covered are the components a webhook's signature covers (RFC 9421).
var Covered = []string{"@method", "@target-uri", "content-type", "content-digest"}

// claimBatch is how many notices one look claims.
const claimBatch = 50

// send claims the due notices, sends them (a digest subscription's together) and
// records each outcome.
func (k *Keeper) send(ctx context.Context) error {
	now := k.now()
	var claimed []store.Notice
	err := k.cfg.Store.Update(ctx, func(tx store.Tx) error {
		var err error
		claimed, err = tx.ClaimNotices(ctx, now, k.cfg.Instance, now.Add(k.cfg.Claim), claimBatch)
		return err
	})
	if err != nil {
		return fmt.Errorf("claim notices: %w", err)
	}
	var order []string
	groups := map[string][]store.Notice{}
	for _, n := range claimed {
		if _, ok := groups[n.Subscription]; !ok {
			order = append(order, n.Subscription)
		}
		groups[n.Subscription] = append(groups[n.Subscription], n)
	}
	var errs []error
	for _, id := range order {
		s, err := k.cfg.Store.NoticeSubscription(ctx, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ns := groups[id]
		if s.Digest > 0 {
			errs = append(errs, k.deliver(ctx, s, ns))
			continue
		}
		for _, n := range ns {
			errs = append(errs, k.deliver(ctx, s, []store.Notice{n}))
		}
	}
	return errors.Join(errs...)
}

// message is what one delivery sends: one notice, or a digest of several.
type message struct {
	ID      string `json:"notice"` // the first notice's id; the Docket-Notice-Id
	Kind    string `json:"kind"`   // the notice's kind, or "digest"
	Project string `json:"project"`
	Subject string `json:"subject,omitempty"`
	Text    string `json:"text"` // Slack-compatible: the line a chat shows
	Link    string `json:"link"`
	At      string `json:"at"`
	Notices []item `json:"notices,omitempty"` // a digest's notices
}

func (k *Keeper) compose(s store.NoticeSubscription, ns []store.Notice) (message, error) {
	items := make([]item, len(ns))
	for i, n := range ns {
		if err := json.Unmarshal(n.Body, &items[i]); err != nil {
			return message{}, fmt.Errorf("notice %s: %w", n.ID, err)
		}
	}
	first := items[0]
	m := message{ID: ns[0].ID, Kind: first.Kind, Project: s.Project, Subject: first.Subject, Text: first.Text, Link: first.Link,
		At: first.At.UTC().Format(time.RFC3339)}
	if s.Digest > 0 && first.Kind != "test" {
		lines := []string{fmt.Sprintf("Docket: %d notices in project %s:", len(items), s.Project)}
		for _, it := range items {
			lines = append(lines, "• "+it.Text+" "+it.Link)
		}
		m.Kind, m.Subject, m.Text, m.Notices = "digest", "", strings.Join(lines, "\n"), items
		m.Link = k.publicURL() + "/projects/" + url.PathEscape(s.Project) + "/needs"
	} else {
		m.Text += " " + first.Link
	}
	return m, nil
}

// deliver sends ns to s and records the outcome of each: delivered, failed after the last
// attempt (or a refusal a retry cannot mend), or pending again after a back-off.
func (k *Keeper) deliver(ctx context.Context, s store.NoticeSubscription, ns []store.Notice) error {
	m, err := k.compose(s, ns)
	var retry bool
	if err == nil {
		if s.Channel == "email" {
			retry, err = k.mail(ctx, s, m)
		} else {
			retry, err = k.post(ctx, s, m)
		}
	}
	now := k.now()
	attempts := ns[0].Attempts + 1
	state := "delivered"
	reason := ""
	due := now
	if err != nil {
		reason = err.Error()
		state = "failed"
		if retry && attempts < k.cfg.MaxAttempts {
			state = "pending"
			due = now.Add(k.backoff(attempts))
		}
	}
	out := event.Notice{ID: m.ID, Subscription: s.ID, Member: s.Member, Kind: m.Kind, Subject: m.Subject, Channel: s.Channel,
		Destination: Destination(s), Attempts: attempts, Error: reason}
	if len(ns) > 1 {
		out.Count = len(ns)
	}
	if m.Kind == "" {
		out.Kind, out.Subject = ns[0].Kind, ns[0].Subject
	}
	err = k.cfg.Store.Update(ctx, func(tx store.Tx) error {
		for _, n := range ns {
			n.State, n.Attempts, n.DueAt, n.LastError = state, attempts, due, reason
			if state != "pending" {
				n.SettledAt = &now
			}
			if err := tx.SettleNotice(ctx, n); err != nil {
				return err
			}
		}
		switch state {
		case "delivered":
			return eventlog.Append(ctx, tx, contract.ProjectID(s.Project), system, now, event.NoticeDeliveredData(out))
		case "failed":
			return eventlog.Append(ctx, tx, contract.ProjectID(s.Project), system, now, event.NoticeFailedData(out))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record notice %s: %w", m.ID, err)
	}
	attrs := []any{"notice", out.ID, "subscription", s.ID, "destination", out.Destination, "attempts", attempts}
	switch state {
	case "delivered":
		k.log.InfoContext(ctx, "notice delivered", attrs...)
	case "failed":
		k.log.WarnContext(ctx, "notice failed", append(attrs, "err", reason)...)
	default:
		k.log.InfoContext(ctx, "notice attempt failed; retrying", append(attrs, "err", reason, "retry_at", due)...)
	}
	return nil
}

// backoff is the wait after attempt n failed: Backoff doubled n-1 times, at most MaxBackoff.
func (k *Keeper) backoff(n int) time.Duration {
	d := k.cfg.Backoff
	for i := 1; i < n && d < k.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, k.cfg.MaxBackoff)
}

// post sends m to s's webhook, signed. The error names the receiver by scheme://host/…
// only; retry says whether another attempt may fare better.
func (k *Keeper) post(ctx context.Context, s store.NoticeSubscription, m message) (retry bool, err error) {
	where := "POST " + Destination(s)
	body, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Target, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("%s: the URL does not make a request", where)
	}
	sum := sha256.Sum256(body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":")
	req.Header.Set(HeaderID, m.ID)
	req.Header.Set("User-Agent", "docket-notice")
	p := signing.SignatureParams{Components: Covered, Created: k.now().Unix(), Alg: "ed25519", Tag: SignatureTag}
	if err := k.cfg.Signer.SignRequest(req, SignatureLabel, p); err != nil {
		return false, fmt.Errorf("%s: %w", where, err)
	}
	resp, err := k.cfg.HTTP.Do(req)
	if err != nil {
		// A *url.Error names the whole URL; only its cause is kept.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return true, fmt.Errorf("%s: no answer in time", where)
		}
		return true, fmt.Errorf("%s: %s", where, scrub(err.Error(), s.Target))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	retry = resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout
	return retry, fmt.Errorf("%s: status %d", where, resp.StatusCode)
}

// scrub removes target, and its path and query, from a transport error's text.
func scrub(msg, target string) string {
	msg = strings.ReplaceAll(msg, target, Redact(target))
	if u, err := url.Parse(target); err == nil {
		for _, part := range []string{u.RawQuery, u.EscapedPath(), u.Path} {
			if len(part) > 1 {
				msg = strings.ReplaceAll(msg, part, "/…")
			}
		}
	}
	return msg
}

// mail sends m to s's address over SMTP.
func (k *Keeper) mail(ctx context.Context, s store.NoticeSubscription, m message) (retry bool, err error) {
	cfg := k.cfg.SMTP
	if cfg.Addr == "" || cfg.From == "" {
		return false, errors.New("SMTP to " + s.Target + ": this serve has no --smtp and --smtp-from")
	}
	subject := m.Text
	if i := strings.IndexByte(subject, '\n'); i >= 0 {
		subject = subject[:i]
	}
	subject = strings.TrimSuffix(strings.TrimSuffix(subject, " "+m.Link), ":")
	var b strings.Builder
	for _, h := range [][2]string{
		{"From", cfg.From}, {"To", s.Target}, {"Subject", headerSafe(subject)},
		{"Date", k.now().Format(time.RFC1123Z)}, {"Message-ID", "<" + m.ID + "@docket>"}, {HeaderID, m.ID},
		{"MIME-Version", "1.0"}, {"Content-Type", "text/plain; charset=utf-8"}, {"Content-Transfer-Encoding", "8bit"},
	} {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	b.WriteString("\r\n")
	b.WriteString(strings.ReplaceAll(m.Text, "\n", "\r\n"))
	b.WriteString("\r\n\r\nOpen it in Docket: " + m.Link + "\r\nThe decision itself needs you signed in.\r\n")
	var auth smtp.Auth
	if cfg.User != "" {
		host, _, _ := net.SplitHostPort(cfg.Addr)
		auth = smtp.PlainAuth("", cfg.User, cfg.Password, host)
	}
	if err := smtp.SendMail(cfg.Addr, auth, cfg.From, []string{s.Target}, []byte(b.String())); err != nil {
		// A 5xx reply is permanent; anything else (4xx, the network) may pass later.
		var te *textproto.Error
		permanent := errors.As(err, &te) && te.Code >= 500
		return !permanent, fmt.Errorf("SMTP to %s via %s: %w", s.Target, cfg.Addr, err)
	}
	return false, nil
}

// headerSafe keeps one line of a header's value.
func headerSafe(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}
