package apiclient

import (
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"

	"github.com/docketrun/docket/internal/contract"
)

// CanonicalVector returns v in its canonical JSON form (RFC 8785), the bytes a request's
// digest is of, for a person to read before naming the digest in a decision.
func CanonicalVector(v contract.RequestVector) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode request vector: %w", err)
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return "", fmt.Errorf("canonicalize request vector: %w", err)
	}
	return string(canon), nil
}
