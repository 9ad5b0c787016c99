package providertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
)

// BodyTokens is the size of a request body of n bytes in the servers' count of tokens:
// one per four bytes, about what tokenizers give for English text and JSON.
func BodyTokens(n int) int { return (n + 3) / 4 }

// SetWindow gives the server a context window of tokens: each request's size is counted
// ([BodyTokens] of its body) and kept in [Seen.Tokens], and a request over the window is
// refused 400 as the providers refuse one past the model's context, with OverWindow set
// in its Seen. 0 takes any size.
func (s *Server) SetWindow(tokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.window = tokens
}

// windowed counts the body of each request, refuses one over the window, and hands the
// body on to h.
func (s *Server) windowed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "the request body could not be read")
			return
		}
		tokens := BodyTokens(len(body))
		s.mu.Lock()
		window := s.window
		s.sizes = append(s.sizes, tokens)
		s.mu.Unlock()
		if window > 0 && tokens > window {
			s.record(Seen{Path: r.URL.Path, Tokens: tokens, OverWindow: true})
			writeError(w, http.StatusBadRequest, "invalid_request_error",
				fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.", window, tokens))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if window > 0 {
			r = r.WithContext(context.WithValue(r.Context(), tokensKey{}, tokens))
		}
		h(w, r)
	}
}

// Sizes returns the size, in tokens, of every request the server received, in order.
func (s *Server) Sizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.sizes...)
}

// tokensKey keys a request's size in its context, when the server has a window.
type tokensKey struct{}

// promptTokens is the prompt's size the server reports in its usage: its own count when
// it has a window, as a provider reports what it counted, else 100.
func promptTokens(r *http.Request) int {
	if n, ok := r.Context().Value(tokensKey{}).(int); ok {
		return n
	}
	return 100
}
