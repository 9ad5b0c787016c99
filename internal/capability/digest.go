package capability

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"strconv"

	"github.com/docketrun/docket/internal/contract"
)

// Release names an installed capability version and pins its content.
type Release struct {
	ID      string
	Version string
	Digest  string // "sha256:" and 64 hex digits; see [Digest]
}

// String returns "id@version", the name the Board gives the release.
func (r Release) String() string { return r.ID + "@" + r.Version }

// digestHeader starts the canonical encoding, so that a future format cannot collide.
const digestHeader = "docket-capability/1\n"

// Digest returns "sha256:<hex>" over the canonical encoding of a package's files (name →
// content): a header line, then for each digested file (capability.toml and top-level *.dl)
// in name order, its name, a newline, the length in bytes of its normalized content, a
// newline, and that content with CRLF turned into LF. Other files do not count.
func Digest(files map[string][]byte) string {
	var names []string
	for name := range files {
		if digested(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return digest(names, files)
}

// digest encodes files in the order of names, which the caller has sorted.
func digest(names []string, files map[string][]byte) string {
	h := sha256.New()
	h.Write([]byte(digestHeader))
	for _, name := range names {
		b := normalize(files[name])
		h.Write([]byte(name + "\n" + strconv.Itoa(len(b)) + "\n"))
		h.Write(b)
	}
	return contract.SumOf(h).String()
}

// normalize turns CRLF line endings into LF, so that a checkout on Windows digests the same.
func normalize(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
}
