package contract

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error code. Clients branch on codes; people read the
// teaching sentence beside them. Codes are never renamed once released.
type Code string

// Error codes of the Board. Other layers add theirs beside these.
const (
	CodeInvalidArgument          Code = "invalid_argument"         // malformed input that fits no finer code
	CodeRuleSyntax               Code = "rule_syntax"              // rule or fact text does not parse
	CodeRuleUnsafe               Code = "rule_unsafe"              // a rule is not range-restricted
	CodeStratification           Code = "stratification"           // negation or aggregation through recursion
	CodeResourceLimit            Code = "resource_limit"           // a safety cap was reached
	CodeArithmetic               Code = "arithmetic"               // exact arithmetic cannot be done (overflow, division by zero)
	CodeIntegerRange             Code = "integer_range"            // an integer outside ±(2^53−1)
	CodeUnknownBuiltin           Code = "unknown_builtin"          // a built-in name used with the wrong arguments
	CodeNodeNotFound             Code = "node_not_found"           // a node id that is not on the Board
	CodeNodeConflict             Code = "node_conflict"            // a node id already in use
	CodeNotRetractable           Code = "not_retractable"          // e.g. retracting a derived node or a capability rule
	CodeCaseTypeUnknown          Code = "case_type_unknown"        // OpenCase names no installed Case Type
	CodeCaseOpeningMissing       Code = "case_opening_missing"     // the opening predicate does not hold
	CodeCaseOpeningNotTrusted    Code = "case_opening_not_trusted" // it holds, but below the floor
	CodeCaseBusinessKey          Code = "case_business_key"        // the business key does not match the contract
	CodeCaseExists               Code = "case_exists"              // a Case with this business key is already open
	CodeCaseNotFound             Code = "case_not_found"
	CodeCaseClosed               Code = "case_closed"
	CodeCaseAcceptanceNotDerived Code = "case_acceptance_not_derived"
	CodeCaseAcceptanceFloor      Code = "case_acceptance_floor_too_weak"
	CodeCaseNotCertified         Code = "case_not_certified"
	CodeCaseReasonRequired       Code = "case_reason_required"
	CodeCaseLocalForbidden       Code = "case_local_forbidden" // Case-local rules/predicates outside an exploration Case
	CodeActionUnknown            Code = "action_unknown"
	CodeActionBlocked            Code = "action_blocked"
	CodeActionParam              Code = "action_param"     // a parameter missing, unknown or of the wrong type
	CodeBindingSupplied          Code = "binding_supplied" // the caller passed a parameter that is bound by the Board
	CodeBindingMissing           Code = "binding_missing"
	CodeBindingAmbiguous         Code = "binding_ambiguous"
	CodeCapabilityInvalid        Code = "capability_invalid"
)

// Error is an error that may leave the process: a stable code, a sentence that teaches the
// fix, and an internal cause that is never sent.
type Error struct {
	Code     Code   `json:"errorCode"`
	Teaching string `json:"teaching"`
	Err      error  `json:"-"` // internal cause; logged, never sent
}

// Errorf returns an *Error with code and a teaching sentence built like fmt.Sprintf.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Teaching: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Teaching }

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the code of the first *Error in err's chain, or "" when there is none.
func CodeOf(err error) Code {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return ""
}
