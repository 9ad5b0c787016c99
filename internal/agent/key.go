package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// KeyEnv is the environment variable that holds a model key when no key file is given.
const KeyEnv = "DOCKET_MODEL_KEY"

// Key is a model API key. It prints, formats and logs as a short digest, never as itself,
// so a key put in a log line or an error by mistake does not leak. The zero Key is "no key".
type Key struct {
	// s is a pointer so that fmt, which cannot call Key's methods when a Key is an
	// unexported field of a printed struct, shows an address there and not the key.
	s *secret
}

type secret struct{ v string }

// NewKey wraps a key; surrounding whitespace (a file's newline) is dropped.
func NewKey(s string) Key {
	s = strings.TrimSpace(s)
	if s == "" {
		return Key{}
	}
	return Key{s: &secret{v: s}}
}

// Reveal returns the key itself, for the one header that carries it.
func (k Key) Reveal() string {
	if k.s == nil {
		return ""
	}
	return k.s.v
}

// IsZero reports whether there is no key.
func (k Key) IsZero() bool { return k.s == nil }

// String is a digest of the key: enough to tell two keys apart in a log, useless to an attacker.
func (k Key) String() string {
	if k.s == nil {
		return "key(none)"
	}
	sum := sha256.Sum256([]byte(k.s.v))
	return "key(sha256:" + hex.EncodeToString(sum[:4]) + ")"
}

// GoString keeps %#v from printing the key.
func (k Key) GoString() string { return k.String() }

// Format keeps every verb (%v, %+v, %s, %q, %x) from printing the key.
func (k Key) Format(f fmt.State, verb rune) { fmt.Fprint(f, k.String()) }

// LogValue logs the digest only.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// Scrub replaces every occurrence of the key in s, for text that came back from an
// endpoint (which may echo what it was sent) before it goes into an error.
func (k Key) Scrub(s string) string {
	if k.s == nil {
		return s
	}
	return strings.ReplaceAll(s, k.s.v, "[redacted]")
}

// LoadKey finds the model key: the file at keyFile when it is set, else the
// [KeyEnv] variable read through getenv. A key file readable by group or others is
// refused, as ssh refuses such private keys. It returns the zero Key when neither is set;
// whether a key is required is the provider's business. Keys never come from flags.
func LoadKey(keyFile string, getenv func(string) string) (Key, error) {
	if keyFile == "" {
		return NewKey(getenv(KeyEnv)), nil
	}
	info, err := os.Stat(keyFile)
	if err != nil {
		return Key{}, &contract.Error{Code: contract.CodeModelConfig, Teaching: fmt.Sprintf("the model key file %s cannot be read; pass a readable file or set %s", keyFile, KeyEnv), Err: err}
	}
	if info.Mode().Perm()&0o077 != 0 {
		return Key{}, contract.Errorf(contract.CodeModelConfig, "the model key file %s is readable by others (mode %v); run chmod 600 %s", keyFile, info.Mode().Perm(), keyFile)
	}
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return Key{}, &contract.Error{Code: contract.CodeModelConfig, Teaching: fmt.Sprintf("the model key file %s cannot be read; pass a readable file or set %s", keyFile, KeyEnv), Err: err}
	}
	k := NewKey(string(b))
	if k.IsZero() {
		return Key{}, contract.Errorf(contract.CodeModelConfig, "the model key file %s is empty; write the key into it", keyFile)
	}
	return k, nil
}

// ScrubError returns err with the key removed from its text. A *[ProviderError] keeps its
// type, with Message and Err scrubbed; any other error that holds the key is replaced by
// its scrubbed text, and one that does not is returned as it is, so errors.Is still works.
func (k Key) ScrubError(err error) error {
	if err == nil || k.s == nil {
		return err
	}
	if pe, ok := err.(*ProviderError); ok {
		pe.Message = k.Scrub(pe.Message)
		pe.Err = k.ScrubError(pe.Err)
		return pe
	}
	if s := err.Error(); strings.Contains(s, k.s.v) {
		return errors.New(k.Scrub(s))
	}
	return err
}
