package agent

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Traced returns p with each model turn in a span "model turn" of tp (its provider's
// name, stop reason and token counts; never the prompt, the answer or the key). A nil
// tp returns p itself.
func Traced(p Provider, tp trace.TracerProvider) Provider {
	if tp == nil {
		return p
	}
	return tracedProvider{Provider: p, tracer: tp.Tracer("github.com/docketrun/docket/internal/agent")}
}

type tracedProvider struct {
	Provider
	tracer trace.Tracer
}

func (t tracedProvider) Turn(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	ctx, span := t.tracer.Start(ctx, "model turn", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("docket.model.provider", t.Name())))
	defer span.End()
	res, err := t.Provider.Turn(ctx, req, onDelta)
	if err != nil {
		span.SetStatus(codes.Error, "the model turn failed")
		return res, err
	}
	span.SetAttributes(attribute.String("docket.model.stop", string(res.Stop)),
		attribute.Int64("docket.model.input_tokens", res.Usage.InputTokens), attribute.Int64("docket.model.output_tokens", res.Usage.OutputTokens))
	return res, nil
}
