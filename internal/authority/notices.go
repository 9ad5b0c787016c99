package authority

import (
	"errors"
	"net/http"

	"github.com/docketrun/docket/internal/authority/notice"
)

// NoticesConfig configures [NewNotices]; zero values take the defaults.
type NoticesConfig struct {
	PublicURL string       // the console's base URL, the start of each notice's link
	SMTP      notice.SMTP  // the SMTP server and From of e-mail notices; none sends no e-mail
	HTTP      *http.Client // the client webhooks are posted with
}

// NewNotices returns the notices of a ([notice.Keeper], docs/notices.md): kept in a's
// store, on a's clock, webhooks signed with a's signing keys.
func NewNotices(a *Authority, cfg NoticesConfig) (*notice.Keeper, error) {
	if a.signer == nil {
		return nil, errors.New("notices need the installation's signing keys (Config.Signer)")
	}
	return notice.New(notice.Config{Store: a.store, Signer: a.signer, PublicURL: cfg.PublicURL, SMTP: cfg.SMTP, HTTP: cfg.HTTP,
		Now: a.now, Rand: a.rand, Log: a.log})
}
