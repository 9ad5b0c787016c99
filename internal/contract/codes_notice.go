package contract

// Error codes of notices.
const (
	CodeInvalidNotice Code = "invalid_notice" // a subscription's kinds, webhook URL, e-mail address or digest that is not valid; the teaching names the field
)
