package agent

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/material"
)

// A material's content never travels with a tool result. The worker that reads a
// material (docket.material.read@1) returns, in place of the text, a reference of the
// form
//
//	docket-material:v1:<material digest>:<offset>:<bytes>:<text digest>
//
// naming the slice it read and attesting its digest. The conversation, which is saved in
// the authority, keeps only the reference. When a model request is built, the runtime
// puts the slice's text in the reference's place — read from the material area on its
// own machine, and only when the slice still has the attested digest and the material's
// disclosure to this Agent's model provider is allowed right now; otherwise a placeholder
// naming the permission to ask for. See docs/materials.md.

// MaterialRefPrefix begins every material text reference.
const MaterialRefPrefix = material.RefPrefix

var materialRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`docket-material:v1:(sha256:[0-9a-f]{64}):([0-9]{1,12}):([0-9]{1,12}):(sha256:[0-9a-f]{64})`)
})

// Materials is what the runtime needs to show a material's text to its model: whether
// the disclosure is allowed, asked of the authority at every request, and the material
// area on its machine.
type Materials interface {
	// Disclosed reports whether material's content may be sent to this Agent's model
	// provider now.
	Disclosed(ctx context.Context, material string) (bool, error)
	// ReadText reads the slice of material from the local material area.
	ReadText(material string, offset, limit int64) (material.Text, error)
}

// withheld is what stands in a request for a material's text the model may not see.
func withheld(digest, why string) string {
	return fmt.Sprintf("[docket: the text of material %s is withheld: %s]", digest, why)
}

// revealMaterials returns msgs with every material reference replaced as the package
// comment says; msgs itself is not changed. With m nil every reference is withheld.
func revealMaterials(ctx context.Context, m Materials, msgs []Message) ([]Message, error) {
	var out []Message
	var ferr error
	allowed := map[string]bool{}
	replace := func(s string) string {
		if !strings.Contains(s, MaterialRefPrefix) {
			return s
		}
		return materialRef().ReplaceAllStringFunc(s, func(ref string) string {
			p := materialRef().FindStringSubmatch(ref)
			digest := p[1]
			text := func() string {
				if m == nil {
					return withheld(digest, "this runtime has no material area")
				}
				ok, seen := allowed[digest]
				if !seen {
					var err error
					if ok, err = m.Disclosed(ctx, digest); err != nil {
						ferr = err
						return withheld(digest, "its disclosure could not be checked")
					}
					allowed[digest] = ok
				}
				if !ok {
					return withheld(digest, "its disclosure to this Agent's model provider is not allowed; ask a member to allow it (docket material disclose AGENT "+digest+")")
				}
				off, _ := strconv.ParseInt(p[2], 10, 64)
				n, _ := strconv.ParseInt(p[3], 10, 64)
				t, err := m.ReadText(digest, off, max(n, 1))
				if err != nil || fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(t.Text))) != p[4] {
					return withheld(digest, "the material area on this machine no longer has the text the worker read; add the file again")
				}
				return t.Text
			}()
			b, err := json.Marshal(text)
			if err != nil {
				ferr = err
				return ""
			}
			return string(b[1 : len(b)-1]) // the reference sits inside a JSON string
		})
	}
	for i, msg := range msgs {
		if msg.Role == RoleAssistant {
			continue // only tool results and outcomes carry a worker's reference
		}
		text := replace(msg.Text)
		var results []ToolResult
		for j, r := range msg.Results {
			if c := replace(r.Content); c != r.Content {
				if results == nil {
					results = append([]ToolResult(nil), msg.Results...)
				}
				results[j].Content = c
			}
		}
		if text == msg.Text && results == nil {
			continue
		}
		if out == nil {
			out = append([]Message(nil), msgs...)
		}
		out[i].Text = text
		if results != nil {
			out[i].Results = results
		}
	}
	if ferr != nil {
		return nil, fmt.Errorf("show materials: %w", ferr)
	}
	if out == nil {
		return msgs, nil
	}
	return out, nil
}

// AuthorityMaterials is the runtime's [Materials]: the disclosure is asked of the
// authority (GET /api/v1/materials/{sha256}, with the Agent's token) before every model
// request that would carry a material's text, so a member's change takes effect at the
// next request; the text is read from the material area on the runtime's machine.
type AuthorityMaterials struct {
	API  API           // the authority's /api/v1 with the Agent's token; required
	Area material.Area // the material area on this machine
}

// Disclosed reports whether the Agent's material may go to its model provider; a
// material the authority does not know for this Agent may not.
func (a AuthorityMaterials) Disclosed(ctx context.Context, digest string) (bool, error) {
	var m contract.Material
	err := a.API.Do(ctx, http.MethodGet, "/api/v1/materials/"+url.PathEscape(digest), nil, &m)
	if contract.CodeOf(err) == contract.CodeMaterialNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return m.Disclosed, nil
}

// ReadText reads a slice of a material from the local area.
func (a AuthorityMaterials) ReadText(digest string, offset, limit int64) (material.Text, error) {
	return a.Area.ReadText(digest, offset, limit)
}
