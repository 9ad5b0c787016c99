package console

import (
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// httpStatus is the one mapping from error codes to HTTP statuses for /api/v1. It is the
// console's policy, not the contract's: clients branch on the code, and the status is for
// proxies and people. The worker hop (/work) and the MCP gateway (/mcp) speak their own
// protocols and map their own codes.
func httpStatus(code contract.Code) int {
	switch code {
	case contract.CodeUnauthenticated, contract.CodeCredentialRevoked, contract.CodeSessionExpired:
		return http.StatusUnauthorized
	case contract.CodeForbidden, contract.CodeHostNotAllowed, contract.CodeCrossOrigin, contract.CodeCSRF, contract.CodeSelfDecision:
		return http.StatusForbidden
	case contract.CodeNotFound, contract.CodeCaseNotFound, contract.CodeCapabilityNotFound, contract.CodeWorkNotFound:
		return http.StatusNotFound
	case contract.CodeAlreadyExists, contract.CodeReleaseConflict, contract.CodeCaseExists,
		contract.CodeRequestClosed, contract.CodeDigestMismatch, contract.CodeNotNeedsPerson:
		return http.StatusConflict
	case contract.CodeBodyTooLarge:
		return http.StatusRequestEntityTooLarge
	case contract.CodeUnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case contract.CodeUnavailable:
		return http.StatusServiceUnavailable
	case contract.CodeInternal, "":
		return http.StatusInternalServerError
	}
	// Every other code refuses the caller's input.
	return http.StatusBadRequest
}
