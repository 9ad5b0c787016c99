// Package httpstatus provides the HTTP statuses that every HTTP edge of Docket gives the
// same error codes: a missing or revoked credential, a refused permission, something
// absent, a body over its bound, of the wrong type or not strict JSON, an unavailable store and the
// authority's own failure.
package httpstatus

import (
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// Of returns the status of code when every edge answers it alike, and false when the
// edge decides: each edge maps its own refusals (the console's input and conflict codes,
// the worker hop's lease, claim and report codes) in its own table. Clients branch on
// the code; the status is for proxies and people.
func Of(code contract.Code) (int, bool) {
	switch code {
	case contract.CodeUnauthenticated, contract.CodeCredentialRevoked:
		return http.StatusUnauthorized, true
	case contract.CodeForbidden:
		return http.StatusForbidden, true
	case contract.CodeNotFound, contract.CodeWorkNotFound:
		return http.StatusNotFound, true
	case contract.CodeDuplicateKey, contract.CodeCaseVariantKey, contract.CodeNullField, contract.CodeInvalidUTF8:
		return http.StatusBadRequest, true
	case contract.CodeBodyTooLarge:
		return http.StatusRequestEntityTooLarge, true
	case contract.CodeUnsupportedMedia:
		return http.StatusUnsupportedMediaType, true
	case contract.CodeUnavailable:
		return http.StatusServiceUnavailable, true
	case contract.CodeInternal, "":
		return http.StatusInternalServerError, true
	}
	return 0, false
}
