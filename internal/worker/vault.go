package worker

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// MaxVaultBytes bounds a vault file.
const MaxVaultBytes = 1 << 20

// Secret is a string that must never be shown: it formats, marshals and logs as
// "[redacted]". Reveal returns the value for the one place that uses it.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret value.
func (s Secret) Reveal() string { return string(s) }

// String returns "[redacted]", so %v and %s never print the secret.
func (s Secret) String() string { return redacted }

// GoString returns "[redacted]", so %#v never prints the secret.
func (s Secret) GoString() string { return redacted }

// LogValue logs "[redacted]".
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON writes "[redacted]", so a Source encoded by mistake leaks nothing.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// Vault holds the worker's Sources with their secret parts: read from a
// local JSON file that only its owner may read. It is immutable after LoadVault and safe
// for concurrent use.
type Vault struct {
	sources map[string]*Source
}

type vaultFile struct {
	Sources map[string]*Source `json:"sources"`
}

// Source is one Source's local record. Which fields apply depends on Type:
// file needs Root; http needs URL (and may add Headers and Hosts); db needs DSN;
// mcp needs Command (stdio) or URL (Streamable HTTP), with Env or Headers.
// A Source logs only its name and type.
type Source struct {
	Name    string            `json:"-"`
	Type    string            `json:"type"`
	Root    string            `json:"root,omitempty"`    // file: absolute directory
	URL     Secret            `json:"url,omitempty"`     // http origin or mcp endpoint; may carry credentials
	DSN     Secret            `json:"dsn,omitempty"`     // db: postgres://… or sqlite:<path>
	Command []string          `json:"command,omitempty"` // mcp stdio: program and arguments
	Env     map[string]Secret `json:"env,omitempty"`     // mcp stdio: extra environment
	Headers map[string]Secret `json:"headers,omitempty"` // http, mcp over HTTP: e.g. Authorization
	Hosts   []string          `json:"hosts,omitempty"`   // http: hosts allowed besides the URL's
	Allow   []string          `json:"allow,omitempty"`   // file: hidden or credential paths the workspace may touch (patterns)
	Deny    []string          `json:"deny,omitempty"`    // file: paths the workspace never touches (patterns); deny wins over allow
	Tier    contract.Tier     `json:"tier,omitempty"`    // the tier its facts take; the authority's record decides
	// Sign, on an http Source, signs each request (RFC 9421, Ed25519) with the keyring at
	// SigningKey (an absolute path, mode 0600, the format of docket's signing.key), naming
	// SignatureAgent (the URL of the key directory that lists the key) in Signature-Agent.
	Sign           bool   `json:"sign,omitempty"`
	SigningKey     string `json:"signingKey,omitempty"`
	SignatureAgent string `json:"signatureAgent,omitempty"`
}

// LogValue logs the Source's name and type, never its secret parts.
func (s *Source) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", s.Name), slog.String("type", s.Type))
}

// LoadVault reads the vault at path. A file readable or writable by group or others is
// refused with vault_permissions: it holds DSNs and tokens.
func LoadVault(path string) (*Vault, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open vault: %w", err)
	}
	defer f.Close()
	// Stat the open file, not the path, so the file checked is the file read.
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat vault: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, contract.Errorf(contract.CodeVaultPermissions,
			"the vault %s has mode %04o, so others may read its secrets; run chmod 600 %s.", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxVaultBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read vault: %w", err)
	}
	v, err := ParseVault(b)
	if err != nil {
		return nil, fmt.Errorf("vault %s: %w", path, err)
	}
	return v, nil
}

// ParseVault parses vault JSON strictly and checks each Source. Errors never quote a
// secret field's value.
func ParseVault(b []byte) (*Vault, error) {
	if len(b) > MaxVaultBytes {
		return nil, contract.Errorf(contract.CodeVaultInvalid, "the vault is over %d bytes.", MaxVaultBytes)
	}
	var f vaultFile
	if err := contract.DecodeStrict(b, &f); err != nil {
		// The strict decoder's refusals name the line, the key and the fix and quote keys
		// only, never a value; any other error may quote one and stays out of the teaching.
		teaching := "the vault is not valid JSON of the form {\"sources\": {name: {type, …}}} with known fields only; fix it."
		if de, ok := errors.AsType[*contract.DecodeError](err); ok {
			teaching = "the vault is not valid: " + de.Error() + "."
		} else if ce, ok := errors.AsType[*contract.Error](err); ok {
			teaching = "the vault is not valid JSON: " + ce.Teaching + "."
		}
		return nil, &contract.Error{Code: contract.CodeVaultInvalid, Teaching: teaching, Err: err}
	}
	v := &Vault{sources: map[string]*Source{}}
	for name, s := range f.Sources {
		if s == nil {
			return nil, contract.Errorf(contract.CodeVaultInvalid, "source %.63q is null; give it a type and its fields.", name)
		}
		if _, err := contract.ParseName(name); err != nil {
			return nil, contract.Errorf(contract.CodeVaultInvalid, "source %v.", err)
		}
		s.Name = name
		if err := s.check(); err != nil {
			return nil, err
		}
		v.sources[name] = s
	}
	return v, nil
}

func (s *Source) check() error {
	bad := func(format string, args ...any) error {
		return contract.Errorf(contract.CodeVaultInvalid, "source %s: "+format, append([]any{s.Name}, args...)...)
	}
	if s.Type != "http" && (s.Sign || s.SigningKey != "" || s.SignatureAgent != "") {
		return bad("sign, signingKey and signatureAgent sign outbound requests; only an http Source takes them.")
	}
	if s.Type != "file" && (len(s.Allow) > 0 || len(s.Deny) > 0) {
		return bad("allow and deny are workspace path patterns; only a file Source takes them.")
	}
	switch s.Type {
	case "file":
		if !filepath.IsAbs(s.Root) {
			return bad("a file Source needs an absolute \"root\" directory.")
		}
		if s.URL != "" || s.DSN != "" || len(s.Command) > 0 {
			return bad("a file Source takes only root, allow, deny and tier.")
		}
		for _, p := range append(slices.Clone(s.Allow), s.Deny...) {
			if _, err := path.Match(p, ""); err != nil || p == "" || strings.HasPrefix(p, "/") {
				return bad("pattern %.80q in allow or deny is not a relative glob like \".github/\" or \"*.pem\".", p)
			}
		}
	case "http":
		if err := checkURL(s.URL); err != nil {
			return bad("%v", err)
		}
		if s.Root != "" || s.DSN != "" || len(s.Command) > 0 {
			return bad("an http Source takes url, headers, hosts, tier and sign with signingKey and signatureAgent.")
		}
		if s.Sign {
			if !filepath.IsAbs(s.SigningKey) {
				return bad("a signing http Source needs an absolute \"signingKey\" path to its Ed25519 keyring.")
			}
			if u, err := url.Parse(s.SignatureAgent); err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
				return bad("a signing http Source needs \"signatureAgent\", the absolute URL of the key directory that lists its key.")
			}
		} else if s.SigningKey != "" || s.SignatureAgent != "" {
			return bad("signingKey and signatureAgent go with \"sign\": true.")
		}
	case "db":
		d := s.DSN.Reveal()
		if !strings.HasPrefix(d, "postgres://") && !strings.HasPrefix(d, "postgresql://") && !strings.HasPrefix(d, "sqlite:") {
			return bad("a db Source needs a \"dsn\" starting postgres://, postgresql:// or sqlite:.")
		}
		if s.Root != "" || s.URL != "" || len(s.Command) > 0 {
			return bad("a db Source takes only dsn and tier.")
		}
	case "mcp":
		if (len(s.Command) > 0) == (s.URL != "") {
			return bad("an mcp Source needs exactly one of \"command\" (stdio) or \"url\" (Streamable HTTP).")
		}
		if s.URL != "" {
			if err := checkURL(s.URL); err != nil {
				return bad("%v", err)
			}
		}
		if s.Root != "" || s.DSN != "" {
			return bad("an mcp Source takes command and env, or url and headers.")
		}
	default:
		return bad("type %.20q is not one of %s.", s.Type, strings.Join(contract.SourceTypes, ", "))
	}
	return nil
}

// checkURL checks an http(s) URL without ever quoting it: it may carry credentials.
func checkURL(s Secret) error {
	u, err := url.Parse(s.Reveal())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("\"url\" must be an absolute http or https URL")
	}
	return nil
}

// Source returns the Source named name.
func (v *Vault) Source(name string) (*Source, bool) {
	s, ok := v.sources[name]
	return s, ok
}

// Names returns the Source names, sorted.
func (v *Vault) Names() []string {
	names := make([]string, 0, len(v.sources))
	for n := range v.sources {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
