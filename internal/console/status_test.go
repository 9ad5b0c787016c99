package console_test

import (
	"net/http"
	"testing"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/contract"
)

func TestHTTPStatus(t *testing.T) {
	tests := []struct {
		code contract.Code
		want int
	}{
		{contract.CodeUnauthenticated, http.StatusUnauthorized},
		{contract.CodeSelfDecision, http.StatusForbidden},
		{contract.CodeCaseNotFound, http.StatusNotFound},
		{contract.CodeDigestMismatch, http.StatusConflict},
		{contract.CodeNotNeedsPerson, http.StatusConflict},
		{contract.CodeBodyTooLarge, http.StatusRequestEntityTooLarge},
		{contract.CodeUnavailable, http.StatusServiceUnavailable},
		{contract.CodeCardVoid, http.StatusConflict},
		{contract.CodeCardClosed, http.StatusConflict},
		{contract.CodeCardLimit, http.StatusTooManyRequests},
		{contract.CodeCardReason, http.StatusBadRequest},
		{"", http.StatusInternalServerError},
		{contract.CodeRuleSyntax, http.StatusBadRequest},
		{contract.CodeToolNotLocked, http.StatusNotFound},
		{contract.CodeToolUnlocked, http.StatusConflict},
		{contract.CodeToolLockDigest, http.StatusConflict},
		{contract.CodeToolNotAdvertised, http.StatusConflict},
	}
	for _, tt := range tests {
		if got := console.HTTPStatus(tt.code); got != tt.want {
			t.Errorf("HTTPStatus(%q) = %d, want %d", tt.code, got, tt.want)
		}
	}
}
