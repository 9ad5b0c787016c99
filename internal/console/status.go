package console

import (
	"net/http"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/httpstatus"
)

// httpStatus is the one mapping from error codes to HTTP statuses for /api/v1. It is the
// console's policy, not the contract's: clients branch on the code, and the status is for
// proxies and people. Codes every HTTP edge answers alike take [httpstatus.Of]; the
// console's own refusals are listed here.
func httpStatus(code contract.Code) int {
	if status, ok := httpstatus.Of(code); ok {
		return status
	}
	switch code {
	case contract.CodeScheduleState: // pause of a paused schedule, resume of an active one
		return http.StatusConflict
	case contract.CodeSessionExpired, contract.CodeRunKeyRequired:
		return http.StatusUnauthorized
	case contract.CodeHostNotAllowed, contract.CodeProxyRequired, contract.CodeCrossOrigin, contract.CodeCSRF, contract.CodeSelfDecision, contract.CodeAcknowledgementMissing,
		contract.CodeMemberOnly, contract.CodeConsentRequired:
		return http.StatusForbidden
	case contract.CodeBudgetExhausted, contract.CodeRateLimited, contract.CodeCardLimit, contract.CodeTaskLimit, contract.CodeScheduleLimit, contract.CodeHookLimit, contract.CodeConversationLimit:
		return http.StatusTooManyRequests
	case contract.CodeCaseNotFound, contract.CodeCapabilityNotFound, contract.CodeNodeNotFound, contract.CodeHookUnknownCall, contract.CodeHoldNotFound, contract.CodeToolNotLocked:
		return http.StatusNotFound
	case contract.CodeAlreadyExists, contract.CodeReleaseConflict, contract.CodeCaseExists,
		contract.CodeRequestClosed, contract.CodeDigestMismatch, contract.CodeNotNeedsPerson, contract.CodeNotRetryable, contract.CodeOperationRunning,
		contract.CodeCardVoid, contract.CodeCardClosed, contract.CodeTaskConflict, contract.CodeTaskNotClaimed, contract.CodeTaskFinished,
		contract.CodeCaseClosed, contract.CodeHoldNotOwner,
		contract.CodeToolUnlocked, contract.CodeCallChanged, contract.CodeToolLockDigest, contract.CodeToolNotAdvertised,
		contract.CodeBlueprintChanged:
		return http.StatusConflict
	}
	// Every other code refuses the caller's input.
	return http.StatusBadRequest
}
