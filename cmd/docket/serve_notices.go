package main

import (
	"fmt"
	"net"
	"net/url"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/notice"
)

// smtpPasswordEnv names the environment variable that holds the SMTP password, so that
// it is never on a command line.
const smtpPasswordEnv = "DOCKET_SMTP_PASSWORD"

// serveNotices are serve's flags for notices (docs/notices.md).
type serveNotices struct {
	PublicURL string `name:"public-url" help:"The console's URL as people reach it, the start of each notice's link (default: the URL serve listens at, as written to the data dir)."`
	SMTP      string `name:"smtp" help:"SMTP server (HOST:PORT) e-mail notices are sent through; without it, only webhook notices are sent."`
	SMTPFrom  string `name:"smtp-from" help:"The From address of e-mail notices; needed with --smtp."`
	SMTPUser  string `name:"smtp-user" help:"User for the SMTP server's PLAIN auth; the password is read from $DOCKET_SMTP_PASSWORD."`
}

// notices returns serve's notice keeper for a, its links starting at the public URL once
// set.
func (n serveNotices) notices(a *authority.Authority, getenv func(string) string) (*notice.Keeper, error) {
	if (n.SMTP == "") != (n.SMTPFrom == "") {
		return nil, &usageError{err: fmt.Errorf("--smtp and --smtp-from go together: pass both (--smtp mail.example.com:587 --smtp-from docket@example.com), or neither"), help: "docket serve"}
	}
	if n.PublicURL != "" {
		if u, err := url.Parse(n.PublicURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, &usageError{err: fmt.Errorf("--public-url %q is not an absolute http or https URL (https://docket.example.com)", n.PublicURL), help: "docket serve"}
		}
	}
	if n.SMTP != "" {
		if _, _, err := net.SplitHostPort(n.SMTP); err != nil {
			return nil, &usageError{err: fmt.Errorf("--smtp %q is not HOST:PORT (mail.example.com:587)", n.SMTP), help: "docket serve"}
		}
	}
	return authority.NewNotices(a, authority.NoticesConfig{PublicURL: n.PublicURL,
		SMTP: notice.SMTP{Addr: n.SMTP, From: n.SMTPFrom, User: n.SMTPUser, Password: getenv(smtpPasswordEnv)}})
}
