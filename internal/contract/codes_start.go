package contract

// Error codes of docket start's loopback gate.
const (
	CodeRunKeyRequired Code = "run_key_required" // a request to docket start's URL without this run's key
)
