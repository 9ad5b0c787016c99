package authority

import (
	"context"
	"io"
	"slices"

	"github.com/docketrun/docket/internal/authority/boards"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/authority/opclass"
	"github.com/docketrun/docket/internal/contract"
)

// The principals and credentials live in package identity; these names keep the callers
// of the facade unchanged.
type (
	Caller    = identity.Caller
	Token     = identity.Token
	Key       = identity.Key
	Bootstrap = identity.Bootstrap
	Session   = identity.Session

	// Operation is a changing /api/v1 operation with its class.
	Operation = opclass.Operation

	// Change is what a Board call produced, for a write to persist with its event.
	Change = boards.Change
)

// NewKey returns a key read from r (crypto/rand.Reader in production).
func NewKey(r io.Reader) (Key, error) { return identity.NewKey(r) }

// WriteKeyFile writes k to path with mode 0600; see [identity.WriteKeyFile].
func WriteKeyFile(path string, k Key) error { return identity.WriteKeyFile(path, k) }

// ReadKeyFile reads the key written by [WriteKeyFile]; see [identity.ReadKeyFile].
func ReadKeyFile(path string) (Key, error) { return identity.ReadKeyFile(path) }

// ParseConnectionKey returns the Connection a key names, or ok false when k is not a
// Connection key; see [identity.ParseConnectionKey].
func ParseConnectionKey(k Token) (contract.ConnectionID, bool) { return identity.ParseConnectionKey(k) }

// CredentialEnded returns the refusal that ended a context from Hold because its
// credential stopped proving its caller, or nil; see [identity.CredentialEnded].
func CredentialEnded(ctx context.Context) error { return identity.CredentialEnded(ctx) }

// The operation classes; see package opclass.
const (
	Operational = opclass.Operational
	Consent     = opclass.Consent
	MemberOnly  = opclass.MemberOnly
)

// OperationAt returns the changing operation served at a console route pattern, with its
// class; see [opclass.ForRoute].
func OperationAt(pattern string) Operation { return opclass.ForRoute(pattern) }

// OperationNamed returns the changing operation named name; the zero Operation when the
// table has none.
func OperationNamed(name string) Operation {
	op, _ := opclass.ByName(name)
	return op
}

// CardSubject returns what a card of consent operation name is bound to; see
// [opclass.Subjects].
func CardSubject(name string) (opclass.Subject, bool) {
	sub, ok := opclass.Subjects[name]
	return sub, ok
}

// OperationTable returns the table of every changing operation; see [opclass.Table].
func OperationTable() []Operation { return slices.Clone(opclass.Table) }
