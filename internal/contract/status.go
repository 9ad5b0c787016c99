package contract

import "net/http"

// HTTPStatus is the one mapping from error codes to HTTP statuses for /api/v1, whichever
// package serves the route (the console, the decision routes, reconcile). Clients branch
// on the code; the status is for proxies and people. The worker hop (/work) and the MCP
// gateway speak their own protocols and map their own codes.
func HTTPStatus(code Code) int {
	switch code {
	case CodeUnauthenticated, CodeCredentialRevoked, CodeSessionExpired:
		return http.StatusUnauthorized
	case CodeForbidden, CodeHostNotAllowed, CodeCrossOrigin, CodeCSRF, CodeSelfDecision:
		return http.StatusForbidden
	case CodeNotFound, CodeCaseNotFound, CodeCapabilityNotFound, CodeWorkNotFound:
		return http.StatusNotFound
	case CodeAlreadyExists, CodeReleaseConflict, CodeCaseExists,
		CodeRequestClosed, CodeDigestMismatch, CodeNotNeedsPerson:
		return http.StatusConflict
	case CodeBodyTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeUnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	case CodeInternal, "":
		return http.StatusInternalServerError
	}
	// Every other code refuses the caller's input.
	return http.StatusBadRequest
}
