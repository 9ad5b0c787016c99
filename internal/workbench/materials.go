package workbench

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/material"
	"github.com/docketrun/docket/internal/secheaders"
)

// MaterialsPath is docket start's own route that takes the files a person adds to an
// Agent's conversation (the console's Add files, docket material add). It is served by
// this process behind the run-key gate, never by serve: the bytes go into the material
// area in the data dir, and serve learns only each file's name, size, media type and
// sha256 (docs/materials.md).
const MaterialsPath = "/start/materials"

// MaterialsDir is the material area's directory in the data dir; the worker reads it as
// the file Source "materials" and the runtimes show its texts to their models.
const MaterialsDir = "materials"

// MaxMaterialFiles bounds the files of one add.
const MaxMaterialFiles = 20

// MaterialsToken is the CSRF token of the console's Add files form, derived like
// [ExampleToken] from serve's path key.
func MaterialsToken(serveKey string) string {
	m := hmac.New(sha256.New, []byte(serveKey))
	m.Write([]byte("docket start: add materials"))
	return hex.EncodeToString(m.Sum(nil))
}

// materialAdder serves MaterialsPath.
type materialAdder struct {
	rts     *runtimes
	token   string
	area    material.Area
	read    *materialReader // sets the Agents' material read up at the first add
	xorigin *http.CrossOriginProtection
}

// materialsAnswer is the JSON answer to a program (docket material add).
type materialsAnswer struct {
	Materials []contract.Material `json:"materials"`
}

func (m *materialAdder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secheaders.Set(w.Header())
	program := keyInHeader(r)
	refuse := func(status int, err error) {
		ce, ok := errors.AsType[*contract.Error](err)
		if !ok {
			ce = contract.Errorf(contract.CodeInternal, "the files could not be added; docket start's output says why.")
			fmt.Fprintf(m.rts.cfg.Stderr, "docket start: add materials: %v\n", err)
		}
		if program {
			writeGateError(w, status, ce)
			return
		}
		var b strings.Builder
		if terr := materialsPage().Execute(&b, struct{ Error, Back string }{ce.Teaching, m.back("")}); terr != nil {
			writeGateError(w, http.StatusInternalServerError, contract.Errorf(contract.CodeInternal, "the refusal could not be shown; see docket start's output."))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		// The status is sent; a browser that went away has nothing to learn.
		w.Write([]byte(b.String()))
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeGateError(w, http.StatusMethodNotAllowed, contract.Errorf(contract.CodeInvalidArgument,
			"%s takes the files of an Agent page's Add files form (POST multipart/form-data), or docket material add.", MaterialsPath))
		return
	}
	if err := m.xorigin.Check(r); err != nil {
		writeGateError(w, http.StatusForbidden, contract.Errorf(contract.CodeCrossOrigin, "the files were sent from another origin; use the console's Add files."))
		return
	}
	added, err := m.add(w, r, program)
	if err != nil {
		status := http.StatusBadRequest
		if ce, ok := errors.AsType[*contract.Error](err); ok && ce.Code == contract.CodeCSRF {
			status = http.StatusForbidden
		}
		refuse(status, err)
		return
	}
	if program {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		if err := json.NewEncoder(w).Encode(materialsAnswer{Materials: added}); err != nil {
			fmt.Fprintf(m.rts.cfg.Stderr, "docket start: add materials: answer: %v\n", err)
		}
		return
	}
	// The console shows a notice of its fixed set by name (docs/security.md, "Redirects").
	http.Redirect(w, r, m.back(string(added[0].Agent))+"?notice=materials_added", http.StatusSeeOther)
}

var materialsPage = sync.OnceValue(func() *template.Template { return template.Must(template.ParseFS(webFS, "web/materials.html")) })

// back is the Agent's page, or the Agents page when agent is "".
func (m *materialAdder) back(agent string) string {
	p := "/projects/" + url.PathEscape(m.rts.project()) + "/agents"
	if agent != "" {
		p += "/" + url.PathEscape(agent)
	}
	return p
}

// add reads the multipart body as it streams: the fields csrf (from a page), agent and
// conversation first, then each file part, whose bytes go into the area and whose fact
// goes to serve as the member.
func (m *materialAdder) add(w http.ResponseWriter, r *http.Request, program bool) ([]contract.Material, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, contract.Errorf(contract.CodeUnsupportedMedia, "send the files as multipart/form-data, as the Add files form does.")
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxMaterialFiles*(material.MaxSize+64<<10))
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, contract.Errorf(contract.CodeInvalidArgument, "the body is not multipart/form-data; send the form's files.")
	}
	fields := map[string]string{}
	var cl *apiclient.Client
	var added []contract.Material
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return added, contract.Errorf(contract.CodeInvalidArgument, "the body could not be read as multipart/form-data (or is over its bound); send the form again.")
		}
		name := part.FormName()
		if part.FileName() == "" {
			if name != "csrf" && name != "agent" && name != "conversation" {
				return added, contract.Errorf(contract.CodeInvalidArgument, "the form has no field %.40q; send csrf, agent, conversation and files.", name)
			}
			if _, twice := fields[name]; twice || len(added) > 0 {
				return added, contract.Errorf(contract.CodeInvalidArgument, "the field %s is sent twice or after a file; send each field once, before the files.", name)
			}
			b, err := io.ReadAll(io.LimitReader(part, 256))
			if err != nil {
				return added, contract.Errorf(contract.CodeInvalidArgument, "the field %s could not be read; send the form again.", name)
			}
			fields[name] = string(b)
			continue
		}
		if name != "files" {
			return added, contract.Errorf(contract.CodeInvalidArgument, "a file came in the field %.40q; send files in the field files.", name)
		}
		if cl == nil {
			// The fields come before the first file: check them once.
			if !program && !hmac.Equal([]byte(fields["csrf"]), []byte(m.token)) {
				return nil, contract.Errorf(contract.CodeCSRF, "the form's CSRF token is missing or wrong; reload the Agent's page and add the files again.")
			}
			if fields["agent"] == "" {
				return nil, contract.Errorf(contract.CodeInvalidArgument, "name the Agent the files are for in the field agent, before the files.")
			}
			if cl, err = m.rts.member(); err != nil {
				return nil, err
			}
			if m.read != nil {
				if err := m.read.ensure(r.Context(), cl); err != nil {
					return nil, fmt.Errorf("set up the material read: %w", err)
				}
			}
		}
		if len(added) == MaxMaterialFiles {
			return added, contract.Errorf(contract.CodeMaterialInvalid, "one add takes at most %d files; add the rest in another.", MaxMaterialFiles)
		}
		meta, err := m.area.Put(filepath.Base(part.FileName()), part)
		if err != nil {
			return added, err
		}
		var got contract.Material
		in := contract.MaterialAdd{Conversation: fields["conversation"], Name: meta.Name, Size: meta.Size, MediaType: meta.MediaType, SHA256: meta.SHA256}
		if err := cl.Do(r.Context(), http.MethodPost, apiclient.ProjectPath(m.rts.project(), "agents", fields["agent"], "materials"), in, &got); err != nil {
			return added, err
		}
		added = append(added, got)
	}
	if len(added) == 0 {
		return nil, contract.Errorf(contract.CodeInvalidArgument, "no file came; choose at least one file.")
	}
	return added, nil
}
