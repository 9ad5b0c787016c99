package contract

// Error codes of the Board's wire input, Cases and Actions beyond those in error.go.
const (
	CodeHostMetadata    Code = "host_metadata"    // the input carries a field only the host may set
	CodeUnknownField    Code = "unknown_field"    // the input carries a field the schema does not have
	CodeBatchTooLarge   Code = "batch_too_large"  // a batch over its byte, operation or size bounds
	CodeSourceWord      Code = "source_word"      // a tool's fact names a predicate outside its Source's words
	CodeCasePaused      Code = "case_paused"      // the Case is paused by holds; each is released by its owner
	CodeHoldNotFound    Code = "hold_not_found"   // no hold of that id stands on the Case
	CodeHoldNotOwner    Code = "hold_not_owner"   // the hold belongs to another kind of owner, who alone releases it
	CodeActionOnce      Code = "action_once"      // a once_per_case terminal Action already succeeded in the Case
	CodeOutcomeMismatch Code = "outcome_mismatch" // an execution outcome that does not fit its request
)
