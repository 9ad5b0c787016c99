package agent

import (
	"net/url"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// ProviderKind names a provider implementation.
type ProviderKind string

// Provider kinds.
const (
	ProviderAnthropic ProviderKind = "anthropic" // Anthropic Messages API, native tool use
	ProviderOpenAI    ProviderKind = "openai"    // OpenAI Chat Completions or a compatible server, native tool use
	ProviderEmulated  ProviderKind = "emulated"  // Chat Completions without tool support; tools described in the prompt
	ProviderScripted  ProviderKind = "scripted"  // a script of tool calls; no inference
)

// Default endpoints when a native provider is chosen without a URL.
const (
	DefaultAnthropicURL = "https://api.anthropic.com"
	DefaultOpenAIURL    = "https://api.openai.com"
)

// ModelConfig says which model to talk to. It is plain data from flags, DOCKET_*
// variables or a TOML file; the key is not in it, only where to find one (see [LoadKey]).
type ModelConfig struct {
	Provider ProviderKind `toml:"provider"` // empty: picked by [ModelConfig.Resolve]
	URL      string       `toml:"url"`      // endpoint root, e.g. "http://127.0.0.1:8080" or ".../v1"
	Model    string       `toml:"model"`    // the model name the endpoint knows
	KeyFile  string       `toml:"key_file"` // file holding the key; empty: DOCKET_MODEL_KEY
	Script   string       `toml:"script"`   // scripted provider only: the script file
}

// Resolve returns c with Provider picked and URL defaulted, or a *contract.Error naming
// what is missing. When Provider is empty it is picked this way: a Script means scripted;
// a URL on api.anthropic.com, or one naming /v1/messages, means anthropic; any other URL
// means openai, since most local and hosted servers speak Chat Completions. Emulated tool
// use is never guessed: a server without tool support must be named with provider "emulated".
func (c ModelConfig) Resolve() (ModelConfig, error) {
	if c.Provider == "" {
		switch {
		case c.Script != "":
			c.Provider = ProviderScripted
		case c.URL == "":
			return c, contract.Errorf(contract.CodeModelConfig, "no model is configured; pass --model-url and --model, or --provider anthropic|openai, or --script for a scripted run")
		case isAnthropicURL(c.URL):
			c.Provider = ProviderAnthropic
		default:
			c.Provider = ProviderOpenAI
		}
	}
	switch c.Provider {
	case ProviderScripted:
		if c.Script == "" {
			return c, contract.Errorf(contract.CodeModelConfig, "the scripted provider needs a script; pass --script FILE")
		}
		return c, nil
	case ProviderAnthropic:
		if c.URL == "" {
			c.URL = DefaultAnthropicURL
		}
	case ProviderOpenAI:
		if c.URL == "" {
			c.URL = DefaultOpenAIURL
		}
	case ProviderEmulated:
		if c.URL == "" {
			return c, contract.Errorf(contract.CodeModelConfig, "the emulated provider needs the server's URL; pass --model-url")
		}
	default:
		return c, contract.Errorf(contract.CodeModelConfig, "unknown provider %q; use anthropic, openai, emulated or scripted", c.Provider)
	}
	if c.Script != "" {
		return c, contract.Errorf(contract.CodeModelConfig, "a script is only read by the scripted provider, not %s; drop --script or pass --provider scripted", c.Provider)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		// The text is not echoed: a mistyped URL may hold a key.
		return c, contract.Errorf(contract.CodeModelConfig, "the model URL does not parse; pass e.g. http://127.0.0.1:8080 or https://host/v1")
	}
	if u.User != nil {
		return c, contract.Errorf(contract.CodeModelConfig, "the model URL carries credentials; remove them and put the key in a key file or %s", KeyEnv)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return c, contract.Errorf(contract.CodeModelConfig, "model URL %q is not an http(s) server root without query; pass e.g. http://127.0.0.1:8080 or https://host/v1", u.Redacted())
	}
	if c.Model == "" {
		return c, contract.Errorf(contract.CodeModelConfig, "no model name is configured; pass --model NAME")
	}
	return c, nil
}

func isAnthropicURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	return u.Hostname() == "api.anthropic.com" || strings.Contains(u.Path, "/v1/messages")
}

// Endpoint is the URL a provider posts path ("chat/completions", "messages") to, from the
// model URL as a person pastes it (docs/workbench.md, Model URLs):
//
//   - a URL already ending in path is used as it is: ".../v1/chat/completions", and
//     DeepSeek's documented "https://api.deepseek.com/chat/completions";
//   - a URL ending in an API version ("/v1", "/v4", "/v1beta") gets path after it;
//   - any other URL is a server root and gets "/v1/" + path.
//
// A trailing slash is ignored.
func Endpoint(root, path string) string {
	root = strings.TrimRight(root, "/")
	switch {
	case strings.HasSuffix(root, "/"+path):
		return root
	case isVersion(root[strings.LastIndexByte(root, '/')+1:]):
		return root + "/" + path
	}
	return root + "/v1/" + path
}

// isVersion reports whether a path segment names an API version: "v1", "v4", "v1beta".
func isVersion(seg string) bool {
	if len(seg) < 2 || seg[0] != 'v' || seg[1] < '0' || seg[1] > '9' {
		return false
	}
	for _, r := range seg[1:] {
		if (r < '0' || r > '9') && (r < 'a' || r > 'z') {
			return false
		}
	}
	return true
}

// Wire says which wire a profile's provider speaks at which URL, for a person to check
// what a pasted model URL became: "Chat Completions at https://api.deepseek.com/chat/completions".
// "" for the scripted provider, which speaks none.
func Wire(provider ProviderKind, modelURL string) string {
	switch provider {
	case ProviderAnthropic:
		return "Messages API at " + Endpoint(cmpOr(modelURL, DefaultAnthropicURL), "messages")
	case ProviderOpenAI:
		return "Chat Completions at " + Endpoint(cmpOr(modelURL, DefaultOpenAIURL), "chat/completions")
	case ProviderEmulated:
		return "Chat Completions, tools in the prompt, at " + Endpoint(modelURL, "chat/completions")
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
