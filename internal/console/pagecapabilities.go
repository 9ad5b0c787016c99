package console

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// capabilitiesBody is what the Capabilities page shows: the installed releases, newest
// first, at most maxRowsShown, and the install form, kept after a refusal.
type capabilitiesBody struct {
	Releases []contract.CapabilityContent
	Pager    pager
	Form     installForm
	Error    string // why the package was refused: each problem with its file:line
}

// installForm is the install form's pasted part: capability.toml and one rule file.
type installForm struct {
	Manifest  string // capability.toml's text
	RulesName string // the rule file's name, e.g. rules.dl
	Rules     string // its text
}

// pageCapabilities shows what the project's installed releases let its agents do: each
// release with its digest, its Case Types, its Actions (parameters, bindings, approval,
// the Tool that runs them) and its rules' text.
func (s *Server) pageCapabilities(w http.ResponseWriter, r *http.Request, v visit) error {
	return s.showCapabilities(w, r, v, http.StatusOK, capabilitiesBody{Form: installForm{RulesName: "rules.dl"}})
}

func (s *Server) showCapabilities(w http.ResponseWriter, r *http.Request, v visit, status int, b capabilitiesBody) error {
	cs, err := s.auth.Capabilities(r.Context(), v.caller, v.project)
	if err != nil {
		return err
	}
	key := func(c contract.CapabilityContent) string { return c.Release.ID + "@" + c.Release.Version }
	cs = newestFirst(cs, func(c contract.CapabilityContent) (time.Time, string) { return c.Release.CreatedAt, key(c) })
	list := listPage{Path: "/projects/" + url.PathEscape(string(v.project)) + "/capabilities", Param: "after", What: "releases"}
	if b.Releases, b.Pager, err = pageOf(r.URL.Query(), list, cs, key, maxRowsShown); err != nil {
		return err
	}
	return s.render(w, r, v, status, "capabilities", b, event.CapabilityInstalled)
}

// pageInstallCapability installs the package the form carries: files uploaded (a
// capability.toml and its *.dl rule files), or capability.toml and one rule file pasted.
// The authority validates it as it does `docket capability install`; a refusal is shown
// on the page with each problem's file:line, and the pasted text kept.
func (s *Server) pageInstallCapability(w http.ResponseWriter, r *http.Request, v visit) error {
	f := installForm{Manifest: r.PostFormValue("manifest"), RulesName: strings.TrimSpace(r.PostFormValue("rules_name")), Rules: r.PostFormValue("rules")}
	up, err := uploadOf(r, f)
	if err == nil {
		_, err = s.auth.InstallCapability(r.Context(), v.caller, v.project, up)
	}
	if err != nil {
		msg, status, err := shownRefusal(err)
		if err != nil {
			return err
		}
		return s.showCapabilities(w, r, v, status, capabilitiesBody{Form: f, Error: msg})
	}
	http.Redirect(w, r, "/projects/"+url.PathEscape(string(v.project))+"/capabilities?"+withNotice(nil, noticeCapabilityInstalled), http.StatusSeeOther)
	return nil
}

// uploadOf reads the package from the form: the uploaded files when any were chosen,
// else the pasted text. A package is either, never both.
func uploadOf(r *http.Request, f installForm) (contract.CapabilityUpload, error) {
	up := contract.CapabilityUpload{Files: map[string]string{}}
	if r.MultipartForm != nil {
		for _, fh := range r.MultipartForm.File["files"] {
			name := path.Base(strings.ReplaceAll(fh.Filename, `\`, "/"))
			if _, dup := up.Files[name]; dup {
				return up, contract.Errorf(contract.CodeInvalidArgument, "two files named %s were chosen; choose capability.toml and each rule file once.", name)
			}
			fr, err := fh.Open()
			if err != nil {
				return up, fmt.Errorf("read the uploaded %s: %w", name, err)
			}
			b, err := io.ReadAll(fr)
			fr.Close()
			if err != nil {
				return up, fmt.Errorf("read the uploaded %s: %w", name, err)
			}
			up.Files[name] = string(b)
		}
	}
	pasted := strings.TrimSpace(f.Manifest) != "" || strings.TrimSpace(f.Rules) != ""
	switch {
	case len(up.Files) > 0 && pasted:
		return up, contract.Errorf(contract.CodeInvalidArgument, "the form carries both chosen files and pasted text; send one of them: clear the text, or choose no file.")
	case len(up.Files) > 0:
		return up, nil
	case !pasted:
		return up, contract.Errorf(contract.CodeInvalidArgument, "the form carries no package; choose capability.toml and its rule files, or paste capability.toml's text.")
	}
	up.Files["capability.toml"] = f.Manifest
	if strings.TrimSpace(f.Rules) != "" {
		if f.RulesName == "" || f.RulesName == "capability.toml" {
			return up, contract.Errorf(contract.CodeInvalidArgument, "name the pasted rule file as capability.toml names it, e.g. rules.dl.")
		}
		up.Files[f.RulesName] = f.Rules
	}
	return up, nil
}
