package agent

import (
	"regexp"
	"strings"
	"sync"
)

// DefaultContextWindow is the context window, in tokens, of a model the runtime does not
// know and whose profile names none: small enough for most models served today.
const DefaultContextWindow = 32768

// contextWindows are the context windows, in tokens, of models the runtime knows, by the
// exact name their provider gives them. A dated name (claude-sonnet-4-5-20250929,
// gpt-4o-2024-08-06) has the window of its undated name. Set a profile's context window
// for any other model (docs/workbench.md, "Long conversations").
var contextWindows = map[string]int{
	// Anthropic
	"claude-opus-4-1":   200000,
	"claude-opus-4":     200000,
	"claude-sonnet-4-5": 200000,
	"claude-sonnet-4":   200000,
	"claude-haiku-4-5":  200000,
	"claude-3-7-sonnet": 200000,
	"claude-3-5-haiku":  200000,
	// OpenAI
	"gpt-5":        400000,
	"gpt-5-mini":   400000,
	"gpt-5-nano":   400000,
	"gpt-4.1":      1047576,
	"gpt-4.1-mini": 1047576,
	"gpt-4.1-nano": 1047576,
	"gpt-4o":       128000,
	"gpt-4o-mini":  128000,
	"o3":           200000,
	"o4-mini":      200000,
	// DeepSeek
	"deepseek-chat":     128000,
	"deepseek-reasoner": 128000,
}

// datedName is a model name that ends in a release date.
var datedName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+?)-(\d{8}|\d{4}-\d{2}-\d{2})$`) })

// ContextWindow is the context window of model, in tokens: profile when it is set (above
// 0), else the window of a model the runtime knows, else [DefaultContextWindow]. known
// says whether the window came from the profile or the table.
func ContextWindow(model string, profile int) (window int, known bool) {
	if profile > 0 {
		return profile, true
	}
	name := strings.ToLower(strings.TrimSpace(model))
	if w, ok := contextWindows[name]; ok {
		return w, true
	}
	if m := datedName().FindStringSubmatch(name); m != nil {
		if w, ok := contextWindows[m[1]]; ok {
			return w, true
		}
	}
	return DefaultContextWindow, false
}
