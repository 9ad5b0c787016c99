package httpstatus_test

import (
	"net/http"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/httpstatus"
)

func TestOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code   contract.Code
		status int
		ok     bool
	}{
		{contract.CodeUnauthenticated, http.StatusUnauthorized, true},
		{contract.CodeCredentialRevoked, http.StatusUnauthorized, true},
		{contract.CodeForbidden, http.StatusForbidden, true},
		{contract.CodeNotFound, http.StatusNotFound, true},
		{contract.CodeWorkNotFound, http.StatusNotFound, true},
		{contract.CodeBodyTooLarge, http.StatusRequestEntityTooLarge, true},
		{contract.CodeUnsupportedMedia, http.StatusUnsupportedMediaType, true},
		{contract.CodeUnavailable, http.StatusServiceUnavailable, true},
		{contract.CodeInternal, http.StatusInternalServerError, true},
		{"", http.StatusInternalServerError, true},
		{contract.CodeDuplicateKey, http.StatusBadRequest, true},
		{contract.CodeCaseVariantKey, http.StatusBadRequest, true},
		{contract.CodeNullField, http.StatusBadRequest, true},
		{contract.CodeInvalidUTF8, http.StatusBadRequest, true},
		{contract.CodeInvalidArgument, 0, false},
		{contract.CodeLeaseExpired, 0, false},
		{contract.CodeSessionExpired, 0, false},
	}
	for _, tt := range tests {
		if status, ok := httpstatus.Of(tt.code); status != tt.status || ok != tt.ok {
			t.Errorf("Of(%q) = %d, %v, want %d, %v", tt.code, status, ok, tt.status, tt.ok)
		}
	}
}
