// Package material keeps the bytes of materials, the files a person hands an Agent, in
// the material area on the machine docket start runs on, and reads them back as bounded
// text. The authority never sees the bytes: it learns only a material's name, size,
// media type and sha256 (docs/materials.md).
//
// The area is one directory: each material is a file named by the hex of its sha256,
// mode 0600, in a directory of mode 0700. A material is never changed once written, and
// every read checks the bytes still have their digest.
package material

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/docketrun/docket/internal/contract"
)

// MaxSize bounds one material's bytes.
const MaxSize = 32 << 20

// MaxNameLen bounds a material's name in bytes.
const MaxNameLen = 255

// DefaultReadLimit and MaxReadLimit bound one read's text in bytes.
const (
	DefaultReadLimit = 16 << 10
	MaxReadLimit     = 64 << 10
)

// Meta is what the Board learns of a material: never its bytes.
type Meta struct {
	Name      string `json:"name"`
	Size      int64  `json:"size"`
	MediaType string `json:"mediaType"`
	SHA256    string `json:"sha256"` // "sha256:" and 64 lowercase hex digits
}

// Area is the material area: one directory on the worker's machine.
type Area struct {
	Dir string
}

// CheckName refuses a name that is empty, too long, not UTF-8, holds a path separator,
// a control character, or is "." or "..". A name is only a label: the bytes are kept
// under their digest, never under the name.
func CheckName(name string) error {
	bad := func(why string) error {
		return contract.Errorf(contract.CodeMaterialInvalid, "the material's name %s; give the file a plain name such as report.txt.", why)
	}
	switch {
	case name == "":
		return bad("is empty")
	case len(name) > MaxNameLen:
		return bad(fmt.Sprintf("is %d bytes long, over %d", len(name), MaxNameLen))
	case !utf8.ValidString(name):
		return bad("is not UTF-8")
	case name == "." || name == "..":
		return bad("is " + name)
	case strings.ContainsAny(name, `/\`):
		return bad("holds a path separator")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return bad("holds a control character")
		}
	}
	return nil
}

// ParseDigest checks d is "sha256:" and 64 lowercase hex digits and returns the hex.
func ParseDigest(d string) (string, error) {
	h, ok := strings.CutPrefix(d, "sha256:")
	if ok && len(h) == 64 && strings.Trim(h, "0123456789abcdef") == "" {
		return h, nil
	}
	return "", contract.Errorf(contract.CodeMaterialInvalid, "%q is not a material's digest; give it as docket material list shows it: sha256: and 64 lowercase hex digits.", short(d))
}

func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// MediaType returns the media type of content named name: from the name's extension
// when the standard table knows it, else sniffed from its first bytes.
func MediaType(name string, head []byte) string {
	if t := mime.TypeByExtension(filepath.Ext(name)); t != "" {
		if mt, _, err := mime.ParseMediaType(t); err == nil {
			return mt
		}
	}
	mt, _, err := mime.ParseMediaType(http.DetectContentType(head))
	if err != nil {
		return "application/octet-stream"
	}
	return mt
}

// Put writes the bytes r gives (at most MaxSize) into the area as a material named name,
// and returns its Meta. Writing the same bytes again keeps the one copy.
func (a Area) Put(name string, r io.Reader) (Meta, error) {
	if err := CheckName(name); err != nil {
		return Meta{}, err
	}
	if err := os.MkdirAll(a.Dir, 0o700); err != nil {
		return Meta{}, fmt.Errorf("material area: %w", err)
	}
	f, err := os.CreateTemp(a.Dir, ".incoming-*")
	if err != nil {
		return Meta{}, fmt.Errorf("material area: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after the rename there is nothing left to remove
	h := sha256.New()
	head := &headBuffer{}
	n, err := io.Copy(io.MultiWriter(f, h, head), io.LimitReader(r, MaxSize+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Meta{}, fmt.Errorf("material area: write %s: %w", name, err)
	}
	if n > MaxSize {
		return Meta{}, contract.Errorf(contract.CodeMaterialInvalid, "%s is over %d MiB, the bound of one material; hand the Agent a smaller file, or put it in a workspace Source.", name, MaxSize>>20)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if err := os.Rename(tmp, filepath.Join(a.Dir, sum)); err != nil {
		return Meta{}, fmt.Errorf("material area: %w", err)
	}
	return Meta{Name: name, Size: n, MediaType: MediaType(name, head.b), SHA256: "sha256:" + sum}, nil
}

// headBuffer keeps the first 512 bytes written to it, for sniffing.
type headBuffer struct{ b []byte }

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := 512 - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Text is one bounded read of a material's text.
type Text struct {
	SHA256    string `json:"sha256"`
	Size      int64  `json:"size"`
	Offset    int64  `json:"offset"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"` // more text follows Offset+len(Text)
}

// ReadText reads at most limit bytes of material digest's text from offset (limit 0:
// DefaultReadLimit; at most MaxReadLimit), ending on a whole UTF-8 character. It checks
// the whole file still has its digest, and refuses content that is not UTF-8 text.
func (a Area) ReadText(digest string, offset, limit int64) (Text, error) {
	hexsum, err := ParseDigest(digest)
	if err != nil {
		return Text{}, err
	}
	if offset < 0 || limit < 0 || limit > MaxReadLimit {
		return Text{}, contract.Errorf(contract.CodeMaterialInvalid, "read from a non-negative offset at most %d bytes.", MaxReadLimit)
	}
	if limit == 0 {
		limit = DefaultReadLimit
	}
	b, err := os.ReadFile(filepath.Join(a.Dir, hexsum))
	if errors.Is(err, fs.ErrNotExist) {
		return Text{}, contract.Errorf(contract.CodeMaterialNotFound, "material %s is not in this machine's material area; add it again with docket material add.", digest)
	}
	if err != nil {
		return Text{}, fmt.Errorf("material area: %w", err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexsum {
		return Text{}, contract.Errorf(contract.CodeMaterialNotFound, "material %s no longer has its digest in the material area: it was changed on disk; add the file again.", digest)
	}
	if !utf8.Valid(b) || strings.ContainsRune(string(b), 0) {
		return Text{}, contract.Errorf(contract.CodeMaterialInvalid, "material %s is not UTF-8 text; only text materials are read (docs/materials.md).", digest)
	}
	if offset > int64(len(b)) {
		offset = int64(len(b))
	}
	end := min(offset+limit, int64(len(b)))
	for end > offset && end < int64(len(b)) && !utf8.RuneStart(b[end]) {
		end--
	}
	for offset < end && !utf8.RuneStart(b[offset]) {
		offset++
	}
	return Text{SHA256: digest, Size: int64(len(b)), Offset: offset, Text: string(b[offset:end]), Truncated: end < int64(len(b))}, nil
}

// RefPrefix begins every reference to a material's text.
const RefPrefix = "docket-material:v1:"

// Ref returns the reference that stands for t's text wherever it leaves the material
// area: "docket-material:v1:" + the material's digest, the slice's offset and length
// in bytes, and the digest of the slice's text, which attests what was read without
// holding it.
func Ref(t Text) string {
	return fmt.Sprintf("%s%s:%d:%d:sha256:%x", RefPrefix, t.SHA256, t.Offset, len(t.Text), sha256.Sum256([]byte(t.Text)))
}
