package event

import "github.com/docketrun/docket/internal/contract"

// BudgetSetData is a member's set of a budget: its limits as kept (an Agent by id), the
// version the set made, and whether it forgot what the current window spent.
type BudgetSetData struct {
	Name string `json:"name"`
	contract.BudgetLimits
	Version int64 `json:"version"`
	Reset   bool  `json:"reset,omitempty"`
}

// BudgetRemovedData is a member's removal of a budget: the version it had, and the
// limits it held then, so the log alone says what stopped counting.
type BudgetRemovedData struct {
	Name string `json:"name"`
	contract.BudgetLimits
	Version int64 `json:"version"`
}

// BudgetWarnedData is a budget's window reaching its warning share.
type BudgetWarnedData struct {
	contract.BudgetCrossing
}

// BudgetExhaustedData is a budget that had no room for a model request, which was not
// sent.
type BudgetExhaustedData struct {
	contract.BudgetCrossing
}

func (BudgetSetData) EventType() string       { return BudgetSet }
func (BudgetWarnedData) EventType() string    { return BudgetWarned }
func (BudgetExhaustedData) EventType() string { return BudgetExhausted }
func (BudgetRemovedData) EventType() string   { return BudgetRemoved }
