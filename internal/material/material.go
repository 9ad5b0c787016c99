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
	"bytes"
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
	"github.com/docketrun/docket/internal/material/pdftext"
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
	Offset    int64  `json:"offset"` // in the material's text: a PDF's pages' text, for a PDF
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`       // more text follows Offset+len(Text) (in the page read, for a page)
	Page      int64  `json:"page,omitempty"`  // the PDF page read, from 1; 0 for a text file or a read by offset
	Pages     int64  `json:"pages,omitempty"` // a PDF's pages; 0 for a text file
}

// Query is what one read takes: Limit bytes of text from Offset (Limit 0:
// DefaultReadLimit; at most MaxReadLimit). With Page (from 1), the material must be a
// PDF, Offset counts from that page's start and the read ends at the page's end.
type Query struct {
	Offset, Limit, Page int64
}

// PageBreak separates a PDF's pages in its text, as pdftotext does.
const PageBreak = "\f"

// ReadText reads at most limit bytes of material digest's text from offset: [Area.Read]
// with no page. It is what the runtime reads a reference's slice back with.
func (a Area) ReadText(digest string, offset, limit int64) (Text, error) {
	return a.Read(digest, Query{Offset: offset, Limit: limit})
}

// Read reads the slice q names of material digest's text, ending on a whole UTF-8
// character. It checks the whole file still has its digest. A material's text is the
// file itself when it is UTF-8 text, and a PDF's pages' text, each page ended by
// PageBreak, when it is a PDF (read within pdftext's bounds of time and size); any
// other content, and a PDF whose text cannot be read, is refused.
func (a Area) Read(digest string, q Query) (Text, error) {
	hexsum, err := ParseDigest(digest)
	if err != nil {
		return Text{}, err
	}
	if q.Offset < 0 || q.Limit < 0 || q.Limit > MaxReadLimit || q.Page < 0 {
		return Text{}, contract.Errorf(contract.CodeMaterialInvalid, "read from a non-negative offset (and page) at most %d bytes.", MaxReadLimit)
	}
	limit := q.Limit
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
	size := int64(len(b))
	var text string
	var pages []string
	switch {
	case pdftext.IsPDF(b):
		if pages, err = pdftext.Pages(b, 0); err != nil {
			return Text{}, contract.Errorf(contract.CodeMaterialInvalid, "material %s is a PDF whose text cannot be read (%v); hand the Agent its text as a .txt file instead.", digest, err)
		}
		var sb strings.Builder
		for _, p := range pages {
			sb.WriteString(p)
			sb.WriteString(PageBreak)
		}
		text = sb.String()
	case utf8.Valid(b) && !bytes.Contains(b, []byte{0}):
		text = string(b)
	default:
		return Text{}, contract.Errorf(contract.CodeMaterialInvalid, "material %s is neither UTF-8 text nor a PDF; only those are read (docs/materials.md).", digest)
	}
	start, stop := int64(0), int64(len(text))
	if q.Page > 0 {
		if pages == nil {
			return Text{}, contract.Errorf(contract.CodeMaterialInvalid, "material %s is not a PDF, so it has no pages; read it by offset.", digest)
		}
		if q.Page > int64(len(pages)) {
			return Text{}, contract.Errorf(contract.CodeMaterialInvalid, "material %s has %d pages; ask for a page from 1 to %d.", digest, len(pages), len(pages))
		}
		for _, p := range pages[:q.Page-1] {
			start += int64(len(p) + len(PageBreak))
		}
		stop = start + int64(len(pages[q.Page-1]))
	}
	offset := min(start+q.Offset, stop)
	end := min(offset+limit, stop)
	for end > offset && end < int64(len(text)) && !utf8.RuneStart(text[end]) {
		end--
	}
	for offset < end && !utf8.RuneStart(text[offset]) {
		offset++
	}
	t := Text{SHA256: digest, Size: size, Offset: offset, Text: text[offset:end], Truncated: end < stop, Page: q.Page}
	if pages != nil {
		t.Pages = int64(len(pages))
	}
	return t, nil
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
