package profile

import (
	"math"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/contract"
)

// maxField bounds a profile's text fields in bytes: a URL, a model name or a path.
const maxField = 1024

// maxReason bounds a runtime report's reason in bytes.
const maxReason = 2048

// Validate refuses a profile that cannot work, with [contract.CodeProfileInvalid] and a
// sentence naming the field and the fix. It checks what the authority can know: the
// provider, the URL's shape, the model, the budgets and the digest; the files live
// beside the runtime, which reads them when it starts.
func Validate(p contract.ProfileSpec) error {
	refuse := func(format string, args ...any) error {
		return contract.Errorf(contract.CodeProfileInvalid, format, args...)
	}
	for _, f := range []struct{ name, v string }{
		{"modelUrl", p.ModelURL}, {"model", p.Model}, {"keyFile", p.KeyFile}, {"script", p.Script},
		{"instructionsFile", p.InstructionsFile}, {"instructionsDigest", p.InstructionsDigest}, {"workspace", p.Workspace},
	} {
		if len(f.v) > maxField || !utf8.ValidString(f.v) || strings.ContainsAny(f.v, "\x00\n\r") {
			return refuse("%s is not one line of at most %d bytes; send it on one line.", f.name, maxField)
		}
	}
	if !slices.Contains(contract.Providers, p.Provider) {
		return refuse("provider %.40q is not known; use one of %s.", p.Provider, strings.Join(contract.Providers, ", "))
	}
	if p.Provider == contract.ProviderScripted {
		if p.Script == "" {
			return refuse("the scripted provider needs the script's path; send script, or choose openai or anthropic.")
		}
		if p.ModelURL != "" || p.KeyFile != "" {
			return refuse("the scripted provider runs no model: drop modelUrl and keyFile, or choose openai or anthropic.")
		}
	} else {
		if p.Script != "" {
			return refuse("a script is read only by the scripted provider, not %s; drop script.", p.Provider)
		}
		if err := checkURL(p.Provider, p.ModelURL); err != nil {
			return err
		}
		if p.Model == "" {
			return refuse("no model name; send model, the name the endpoint knows (e.g. gpt-4o-mini or claude-sonnet-4-5).")
		}
	}
	if p.MaxTurns < 0 || p.MaxTokens < 0 || p.MaxUSD < 0 || math.IsNaN(p.MaxUSD) || math.IsInf(p.MaxUSD, 0) {
		return refuse("budgets are zero (no bound) or positive; got turns %d, tokens %d, usd %v.", p.MaxTurns, p.MaxTokens, p.MaxUSD)
	}
	if p.ContextWindow < 0 || (p.ContextWindow > 0 && p.ContextWindow < MinContextWindow) {
		return refuse("contextWindow %d is not a context window; send 0 for the runtime's own, or the model's window in tokens (at least %d).", p.ContextWindow, MinContextWindow)
	}
	if p.Thinking != "" && p.Thinking != contract.ThinkingOn && p.Thinking != contract.ThinkingOff {
		return refuse("thinking %.20q is not on or off; send on, off, or leave it out for the provider's default.", p.Thinking)
	}
	if p.ModelAttempts < 0 || p.ModelAttempts > contract.MaxModelAttempts || p.ModelRetryWaitSeconds < 0 || p.ModelRetryWaitSeconds > contract.MaxModelRetryWaitSeconds {
		return refuse("modelAttempts is 0 (the default) to %d and modelRetryWaitSeconds 0 (the default) to %d; got %d and %d.",
			contract.MaxModelAttempts, contract.MaxModelRetryWaitSeconds, p.ModelAttempts, p.ModelRetryWaitSeconds)
	}
	if p.ModelFirstByteSeconds < 0 || p.ModelFirstByteSeconds > contract.MaxModelDeadlineSeconds || p.ModelIdleSeconds < 0 || p.ModelIdleSeconds > contract.MaxModelDeadlineSeconds {
		return refuse("modelFirstByteSeconds and modelIdleSeconds are 0 (the defaults) to %d; got %d and %d.", contract.MaxModelDeadlineSeconds, p.ModelFirstByteSeconds, p.ModelIdleSeconds)
	}
	if err := validateAllow(p.Allow); err != nil {
		return err
	}
	switch {
	case p.InstructionsFile == "" && p.InstructionsDigest != "":
		return refuse("instructionsDigest is given without instructionsFile; send both or neither.")
	case p.InstructionsFile != "":
		if _, err := contract.ParseDigest(p.InstructionsDigest); err != nil {
			return refuse("instructionsDigest must be the sha256 of the instructions file's content (sha256:<64 hex>); docket agent profile set computes it from --instructions.")
		}
	}
	return nil
}

// checkURL refuses a model URL that is not an http(s) server root. Its text is never
// echoed: a mistyped URL may hold a key.
func checkURL(provider, raw string) error {
	if raw == "" {
		if provider == contract.ProviderEmulated {
			return contract.Errorf(contract.CodeProfileInvalid, "the emulated provider needs the server's URL; send modelUrl.")
		}
		return nil // the provider's public endpoint
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return contract.Errorf(contract.CodeProfileInvalid, "modelUrl does not parse; send e.g. http://127.0.0.1:8080 or https://host/v1.")
	case u.User != nil:
		return contract.Errorf(contract.CodeProfileInvalid, "modelUrl carries credentials; remove them: the key goes in the key file beside the runtime, never in the profile.")
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "":
		return contract.Errorf(contract.CodeProfileInvalid, "modelUrl is not an http(s) server root without query; send e.g. http://127.0.0.1:8080 or https://host/v1.")
	}
	return nil
}

// validateStatus refuses a runtime report of an unknown state or with a reason that is
// not a bounded line.
func validateStatus(st contract.RuntimeStatus) error {
	if !slices.Contains(contract.RuntimeStates, st.State) {
		return contract.Errorf(contract.CodeInvalidArgument, "state %.40q is not a runtime state; use one of %s.", st.State, strings.Join(contract.RuntimeStates, ", "))
	}
	if st.Pid < 0 || st.Restarts < 0 {
		return contract.Errorf(contract.CodeInvalidArgument, "pid and restarts are zero or positive.")
	}
	if len(st.Reason) > maxReason || !utf8.ValidString(st.Reason) {
		return contract.Errorf(contract.CodeInvalidArgument, "the reason is at most %d bytes of UTF-8; shorten it.", maxReason)
	}
	return nil
}

// MinContextWindow is the smallest context window a profile may name, in tokens: below
// it, the system prompt and the tools alone would not fit.
const MinContextWindow = 4096
