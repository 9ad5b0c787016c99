package anthropic_test

import (
	"context"
	"errors"
	"testing"
)

var errCanceled = errors.New("test canceled the turn")

func contextCanceled(t *testing.T) (context.Context, func()) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(t.Context())
	return ctx, func() { cancel(errCanceled) }
}
