package worker_test

import (
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

// TestRows_strict: a Source's rows are read strictly: a column named
// twice, or twice in different case, is refused rather than one of them kept.
func TestRows_strict(t *testing.T) {
	tests := []struct {
		name, in string
		lines    bool
		code     contract.Code
	}{
		{"duplicate column", `{"id":1,"id":2}`, false, contract.CodeDuplicateKey},
		{"case-variant columns in a list", `[{"id":1},{"Id":1,"ID":2}]`, false, contract.CodeCaseVariantKey},
		{"invalid UTF-8 in a line", "{\"a\":1}\n{\"a\":\"\xff\"}", true, contract.CodeInvalidUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := worker.Rows([]byte(tt.in), tt.lines); contract.CodeOf(err) != tt.code {
				t.Errorf("Rows(%q) = %v, want %q", tt.in, err, tt.code)
			}
		})
	}
}
