package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket/internal/agent"
	"github.com/docketrun/docket/internal/agent/provider/anthropic"
	"github.com/docketrun/docket/internal/agent/provider/openai"
	"github.com/docketrun/docket/internal/contract"
)

// ProbeTimeout bounds the model check of a profile being saved: long enough for a local
// server to load its model, short enough for a person waiting on a form.
const ProbeTimeout = 30 * time.Second

// ProbeConfig is the model a profile names: provider, URL and model as the profile has
// them, and the key read from its key file (the zero Key for none).
type ProbeConfig struct {
	Provider string
	URL      string
	Model    string
	Key      agent.Key
}

// Probe sends the model endpoint one small request — a completion of at most one token,
// through the provider's own client, so it is the request the runtime will send — and
// returns why the endpoint refused it or could not be reached: host unreachable, the key
// refused (401), an unknown model. The error is a *contract.Error whose code is the one a
// task failing the same way gets (model_transport, model_auth, model_bad_request, …) and
// whose teaching names the provider, the status and the endpoint's own message, never the
// key (docs/workbench.md, Agent profiles). A scripted profile sends nothing and passes.
// The emulated provider is checked through its Chat Completions endpoint, the request it
// wraps.
func Probe(ctx context.Context, cfg ProbeConfig) error {
	if agent.ProviderKind(cfg.Provider) == agent.ProviderScripted {
		return nil // no endpoint: the script is checked when the runtime loads it
	}
	mc, err := agent.ModelConfig{Provider: agent.ProviderKind(cfg.Provider), URL: cfg.URL, Model: cfg.Model}.Resolve()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	deadlines := agent.Deadlines{FirstByte: ProbeTimeout, Idle: ProbeTimeout}
	var p agent.Provider
	switch mc.Provider {
	case agent.ProviderAnthropic:
		p, err = anthropic.New(anthropic.Config{URL: mc.URL, Model: mc.Model, Key: cfg.Key, Deadlines: deadlines})
	default: // openai, and emulated, whose requests are Chat Completions
		p, err = openai.New(openai.Config{URL: mc.URL, Model: mc.Model, Key: cfg.Key, Deadlines: deadlines})
	}
	if err != nil {
		return err
	}
	_, err = p.Turn(ctx, agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: "Reply with the word ok."}}, MaxTokens: 1}, nil)
	if err == nil {
		return nil
	}
	err = cfg.Key.ScrubError(err)
	pe, ok := errors.AsType[*agent.ProviderError](err)
	if !ok {
		if ctx.Err() != nil {
			return &contract.Error{Code: contract.CodeModelStalled, Teaching: fmt.Sprintf("the model at %s did not answer within %s; start it, or check the model URL", mc.URL, ProbeTimeout), Err: err}
		}
		return &contract.Error{Code: contract.CodeModelConfig, Teaching: fmt.Sprintf("the model check failed: %v", err), Err: err}
	}
	return &contract.Error{Code: pe.Code(), Teaching: probeTeaching(pe, mc, !cfg.Key.IsZero()), Err: err}
}

// probeTeaching says what the endpoint's failure means for the profile, and the fix.
func probeTeaching(pe *agent.ProviderError, mc agent.ModelConfig, keyed bool) string {
	var fix string
	switch pe.Kind {
	case agent.KindTransport, agent.KindStalled:
		fix = "start the model server, or fix the model URL"
	case agent.KindAuth:
		fix = "the key was refused: check the key file"
		if !keyed {
			fix = "the endpoint wants a key, and none was sent: give the profile a key file"
		}
	case agent.KindBadRequest:
		fix = fmt.Sprintf("check the model name (%q) and the provider's wire format", mc.Model)
	case agent.KindRateLimit, agent.KindQuota:
		fix = "the account behind the key cannot take requests now"
	default:
		fix = "check the model URL, the model and the key"
	}
	return fmt.Sprintf("the model check failed: %v; %s", pe, fix)
}
