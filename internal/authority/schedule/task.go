package schedule

import (
	"encoding/json"
	"fmt"

	"github.com/docketrun/docket/internal/contract"
)

// encodeTask is the stored form of a schedule's task: its JSON, which only this package
// reads back.
func encodeTask(t contract.TaskRequest) ([]byte, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encode a schedule's task: %w", err)
	}
	return b, nil
}

func decodeTask(b []byte) (contract.TaskRequest, error) {
	var t contract.TaskRequest
	if err := json.Unmarshal(b, &t); err != nil {
		return contract.TaskRequest{}, fmt.Errorf("decode a schedule's task: %w", err)
	}
	return t, nil
}
