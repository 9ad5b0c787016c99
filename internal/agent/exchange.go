package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/docketrun/docket/internal/contract"
)

// Exchange is one streamed model turn on the wire, the part the provider clients share:
// POST a JSON body, hand a 2xx answer to the provider's stream reader, a non-2xx one to
// its error mapper, and keep the key out of every error on the way.
type Exchange struct {
	Provider string       // names errors: "anthropic", "openai"
	URL      string       // the endpoint
	Body     []byte       // the JSON request
	Header   http.Header  // provider headers, the credential among them
	Key      Key          // scrubbed from transport and stream errors
	HTTP     *http.Client // the client to send with
	// RequestIDHeader names the response header carrying the provider's request id; it
	// fills [Response.RequestID] when set in the answer.
	RequestIDHeader string
	// Deadlines bound the wait for the answer; zero fields take the defaults.
	Deadlines Deadlines
}

// Stream sends x and returns what read makes of a 2xx answer's body, or the error status
// makes of another answer. A cancelled ctx returns its cause rather than the transport's
// complaint about it. x.Deadlines bound the wait for the answer's first byte and between
// its reads: past either, the turn fails with a *[ProviderError] of [KindStalled].
func (x Exchange) Stream(ctx context.Context, status func(*http.Response) error, read func(io.Reader) (Response, error)) (Response, error) {
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.URL, bytes.NewReader(x.Body))
	if err != nil {
		return Response{}, &contract.Error{Code: contract.CodeModelConfig,
			Teaching: "the " + x.Provider + " URL does not make a request; check --model-url", Err: err}
	}
	req.Header = x.Header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	st := newStall(x.Deadlines, x.URL, cancel)
	defer st.stop()
	resp, err := x.HTTP.Do(req)
	if err != nil {
		if parent.Err() != nil {
			return Response{}, fmt.Errorf("%s turn: %w", x.Provider, context.Cause(parent))
		}
		if serr := stalled(ctx, x.Provider); serr != nil {
			return Response{}, serr
		}
		return Response{}, &ProviderError{Provider: x.Provider, Kind: KindTransport, Err: x.Key.ScrubError(err)}
	}
	defer resp.Body.Close()
	st.answered()
	resp.Body = struct {
		io.Reader
		io.Closer
	}{stallBody{r: resp.Body, s: st}, resp.Body}
	if resp.StatusCode/100 != 2 {
		return Response{}, status(resp)
	}
	out, err := read(resp.Body)
	if err != nil {
		if parent.Err() != nil {
			return Response{}, fmt.Errorf("%s turn: %w", x.Provider, context.Cause(parent))
		}
		if serr := stalled(ctx, x.Provider); serr != nil {
			return Response{}, serr
		}
		return Response{}, x.Key.ScrubError(err)
	}
	if x.RequestIDHeader != "" {
		if id := resp.Header.Get(x.RequestIDHeader); id != "" {
			out.RequestID = id
		}
	}
	return out, nil
}

type conversationKey struct{}

// WithConversation returns ctx naming conversation id, for a [Gateway] that tells the
// gateway which conversation a call belongs to (the gateway keeps a selected Case per
// conversation).
func WithConversation(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, conversationKey{}, id)
}

// ConversationOf is the conversation ctx names; "" when none.
func ConversationOf(ctx context.Context) string {
	id, _ := ctx.Value(conversationKey{}).(string)
	return id
}

type viewKey struct{}

// WithView returns ctx saying that the conversation's model holds the View with digest d
// (zero: none), for a [Gateway] that tells the gateway so (_meta "docket/view").
func WithView(ctx context.Context, d contract.Digest) context.Context {
	return context.WithValue(ctx, viewKey{}, d)
}

// ViewOf is the View digest ctx says the conversation holds, and whether it says one.
func ViewOf(ctx context.Context) (contract.Digest, bool) {
	d, ok := ctx.Value(viewKey{}).(contract.Digest)
	return d, ok
}
