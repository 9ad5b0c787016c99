package signing

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Checkpoint is a signed statement that a project's log had head Hash at sequence number
// Seq. Reason says why it was made: "interval", "events", "case.closed" (Case then names
// the Case, whose closure receipt the head covers), "action.completed" (an executed
// Action's outcome, its execution receipt) or "demand".
type Checkpoint struct {
	Project   string    `json:"project"`
	Seq       int64     `json:"seq"`
	Hash      string    `json:"hash"` // hex sha256, as events show their hashes
	At        time.Time `json:"at"`
	Reason    string    `json:"reason"`
	Case      string    `json:"case,omitempty"`
	KeyID     string    `json:"kid"`
	Signature string    `json:"sig"` // base64url Ed25519 signature of [Checkpoint.Message]
}

// Checkpoint reasons.
const (
	ReasonInterval   = "interval" // every T on docket serve
	ReasonEvents     = "events"   // a Board write once the log moved N events
	ReasonCaseClosed = "case.closed"
	// ReasonActionCompleted seals an executed Action's outcome (its execution receipt).
	ReasonActionCompleted = "action.completed"
	ReasonDemand          = "demand"
)

// Message is the bytes a checkpoint's signature covers: the line "docket-checkpoint-v1"
// and then project, seq, hash, at (RFC 3339 with nanoseconds, UTC), reason, case and kid,
// each on its own line ending in "\n".
func (c Checkpoint) Message() []byte {
	b := []byte("docket-checkpoint-v1\n")
	for _, s := range []string{c.Project, strconv.FormatInt(c.Seq, 10), c.Hash, c.At.UTC().Format(time.RFC3339Nano), c.Reason, c.Case, c.KeyID} {
		b = append(b, s...)
		b = append(b, '\n')
	}
	return b
}

// SignCheckpoint fills in c's key id and signature with the keyring's newest key.
func (k *Keyring) SignCheckpoint(c Checkpoint) Checkpoint {
	c.KeyID = k.KeyID()
	_, sig := k.sign(c.Message())
	c.Signature = base64.RawURLEncoding.EncodeToString(sig)
	return c
}

// Verify checks c's signature with the key of keys its kid names.
func (c Checkpoint) Verify(keys []PublicKey) error {
	if err := VerifySignature(keys, c.KeyID, c.Signature, c.Message()); err != nil {
		return fmt.Errorf("checkpoint of %s at seq %d: %w", c.Project, c.Seq, err)
	}
	return nil
}

// Sign signs msg with the newest key and returns its id and the base64url signature,
// for statements other than checkpoints (an export bundle).
func (k *Keyring) Sign(msg []byte) (kid, sig string) {
	kid, s := k.sign(msg)
	return kid, base64.RawURLEncoding.EncodeToString(s)
}

// VerifySignature checks sig (base64url) over msg with the key of keys kid names.
func VerifySignature(keys []PublicKey, kid, sig string, msg []byte) error {
	s, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return errors.New("the signature is not base64url")
	}
	for _, k := range keys {
		if k.ID == kid {
			if !ed25519.Verify(k.Key, msg, s) {
				return fmt.Errorf("the signature does not verify under key %s", kid)
			}
			return nil
		}
	}
	return fmt.Errorf("signed by key %s, which is not among the public keys", kid)
}
