package event

import "github.com/docketrun/docket/internal/contract"

// WorkerRuntimeReportedData is a Connection and the state of the worker docket start
// runs for it, as docket start reports it (docs/workbench.md).
type WorkerRuntimeReportedData struct {
	Connection contract.ConnectionID `json:"connection"`
	contract.RuntimeStatus
}

func (WorkerRuntimeReportedData) EventType() string { return WorkerRuntimeReported }
