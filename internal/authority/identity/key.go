package identity

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
)

// Key is the installation key: 32 random bytes that encrypt connection keys at rest.
// It lives in the data dir, apart from the database, so that a copy of
// the database alone does not reveal the keys it holds. It logs as a digest prefix only.
type Key [32]byte

// LogValue keeps the key out of logs.
func (k Key) LogValue() slog.Value {
	d := sha256.Sum256(k[:])
	return slog.GroupValue(slog.String("sha256", digestPrefix(d[:])))
}

// NewKey returns a key read from r (crypto/rand.Reader in production).
func NewKey(r io.Reader) (Key, error) {
	var k Key
	if _, err := io.ReadFull(r, k[:]); err != nil {
		return Key{}, fmt.Errorf("read random key: %w", err)
	}
	return k, nil
}

// WriteKeyFile writes k to path with mode 0600. It refuses to replace an existing file:
// losing the installation key makes every stored connection key unreadable.
func WriteKeyFile(path string, k Key) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create key file: %w", err)
	}
	_, err = f.Write(k[:])
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write key file %s: %w", path, err)
	}
	return nil
}

// ReadKeyFile reads the key written by [WriteKeyFile]. A file that others may read is
// refused: it would expose every connection key.
func ReadKeyFile(path string) (Key, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Key{}, fmt.Errorf("read key file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return Key{}, fmt.Errorf("read key file %s: mode %v lets others read it; run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, fmt.Errorf("read key file: %w", err)
	}
	var k Key
	if len(b) != len(k) {
		return Key{}, fmt.Errorf("read key file %s: %d bytes, want %d", path, len(b), len(k))
	}
	copy(k[:], b)
	return k, nil
}

// errSealed is returned when a ciphertext does not open under the key.
var errSealed = errors.New("ciphertext does not open under the installation key")

// seal encrypts plaintext with AES-256-GCM under k. The nonce is prepended; aad binds the
// ciphertext to its record (the connection id) so that it cannot be moved to another row.
func (k Key) seal(r io.Reader, plaintext, aad []byte) ([]byte, error) {
	aead, err := k.aead()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := io.ReadFull(r, nonce); err != nil {
		return nil, fmt.Errorf("read nonce: %w", err)
	}
	return aead.Seal(nonce, nonce, plaintext, aad), nil
}

// open decrypts what seal produced for the same aad.
func (k Key) open(ciphertext, aad []byte) ([]byte, error) {
	aead, err := k.aead()
	if err != nil {
		return nil, err
	}
	if len(ciphertext) < aead.NonceSize() {
		return nil, errSealed
	}
	nonce, body := ciphertext[:aead.NonceSize()], ciphertext[aead.NonceSize():]
	p, err := aead.Open(nil, nonce, body, aad)
	if err != nil {
		return nil, errSealed
	}
	return p, nil
}

func (k Key) aead() (cipher.AEAD, error) {
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, fmt.Errorf("aes: %w", err)
	}
	return cipher.NewGCM(block)
}
