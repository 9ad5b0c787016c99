package workbench

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/datadir"
	"github.com/docketrun/docket/internal/secheaders"
)

// ModelPath is docket start's own page that asks for the default model: served by this
// process behind the run-key gate, never by serve, because the key typed into it must
// not reach serve.
const ModelPath = "/start/model"

// DefaultAgent is the Agent the first-use form proposes.
const DefaultAgent = "assistant"

// maxFormBody bounds the first-use form's body in bytes.
const maxFormBody = 16 << 10

// formFields are the first-use form's fields; any other is refused.
var formFields = []string{"csrf", "agent", "provider", "url", "model", "key", "no_check"}

// agentName is what the form takes as an Agent's name, with at most maxAgentName bytes:
// the length is checked apart, as contract's conversation ids are, because a counted
// repetition compiles to a large program at every docket process's start.
var agentName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`) })

// maxAgentName is the longest Agent name the form takes, in bytes.
const maxAgentName = 64

func validAgentName(s string) bool { return len(s) <= maxAgentName && agentName().MatchString(s) }

//go:embed web/model.html web/example.html web/tools.html web/materials.html
var webFS embed.FS

var modelPage = sync.OnceValue(func() *template.Template { return template.Must(template.ParseFS(webFS, "web/model.html")) })

// firstUse serves ModelPath. It is safe for concurrent use.
type firstUse struct {
	rts     *runtimes
	runKey  string
	xorigin *http.CrossOriginProtection // the standard library's refusal of cross-origin writes, as the console's
}

// modelForm is what the page shows, and what a refused submission is shown again with
// (never the key).
type modelForm struct {
	Agent, Provider, URL, Model string
	NoCheck                     bool // save without sending the model a request first
	Error                       string
	CSRF                        string
}

// csrf is the form's token: bound to this run's key, which only a page behind the gate
// has seen, and checked besides the SameSite=Strict cookie and the Origin.
func (f *firstUse) csrf() string {
	m := hmac.New(sha256.New, []byte(f.runKey))
	m.Write([]byte("docket start first-use form"))
	return hex.EncodeToString(m.Sum(nil))
}

func (f *firstUse) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secheaders.Set(w.Header())
	if r.URL.Path != ModelPath {
		writeGateError(w, http.StatusNotFound, contract.Errorf(contract.CodeNotFound, "docket start serves only %s itself; the console is at /.", ModelPath))
		return
	}
	switch r.Method {
	case http.MethodGet:
		f.render(w, http.StatusOK, modelForm{Agent: DefaultAgent, Provider: contract.ProviderOpenAI})
	case http.MethodPost:
		f.submit(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeGateError(w, http.StatusMethodNotAllowed, contract.Errorf(contract.CodeInvalidArgument, "%s takes GET (the form) or POST (its answer).", ModelPath))
	}
}

func (f *firstUse) render(w http.ResponseWriter, status int, m modelForm) {
	m.CSRF = f.csrf()
	var b strings.Builder
	if err := modelPage().Execute(&b, m); err != nil {
		writeGateError(w, http.StatusInternalServerError, contract.Errorf(contract.CodeInternal, "the form could not be shown; see docket start's output."))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	// The status is sent; a browser that went away has nothing to learn.
	w.Write([]byte(b.String()))
}

// submit takes the form: the key goes into the Agent's key file here, the rest of the
// profile to the authority.
func (f *firstUse) submit(w http.ResponseWriter, r *http.Request) {
	form, err := f.decode(w, r)
	if err != nil {
		ce, _ := errors.AsType[*contract.Error](err)
		status := http.StatusBadRequest
		if ce != nil && (ce.Code == contract.CodeCSRF || ce.Code == contract.CodeCrossOrigin) {
			writeGateError(w, http.StatusForbidden, ce)
			return
		}
		f.render(w, status, modelForm{Agent: form.Get("agent"), Provider: form.Get("provider"), URL: form.Get("url"), Model: form.Get("model"), Error: err.Error()})
		return
	}
	m := modelForm{Agent: strings.TrimSpace(form.Get("agent")), Provider: form.Get("provider"), URL: strings.TrimSpace(form.Get("url")), Model: strings.TrimSpace(form.Get("model")),
		NoCheck: form.Get("no_check") != ""}
	if err := f.save(r.Context(), m, form.Get("key")); err != nil {
		m.Error = teachingOf(err)
		f.render(w, http.StatusBadRequest, m)
		return
	}
	f.rts.Sync()
	// On to the console's Get started page, whose next step is giving the Agent a task.
	http.Redirect(w, r, "/projects/"+url.PathEscape(f.rts.project())+"/get-started", http.StatusSeeOther)
}

// decode reads the form strictly (readForm): only its own fields, each once.
func (f *firstUse) decode(w http.ResponseWriter, r *http.Request) (formValues, error) {
	return readForm(w, r, formRules{
		xorigin: f.xorigin, csrf: f.csrf(), max: maxFormBody,
		field: func(k string) (known, repeats bool) { return contains(formFields, k), false },
		only:  "only " + strings.Join(formFields, ", "),
		from:  "the page docket start serves", reload: "the page",
	})
}

// formRules are what readForm holds a gate page's form to.
type formRules struct {
	xorigin *http.CrossOriginProtection
	csrf    string // the token the form must carry in its field csrf
	max     int64  // the body's bound in bytes
	// field reports whether the form has field k, and whether k may come more than once.
	field func(k string) (known, repeats bool)
	// only, from and reload finish the refusals: what to send ("send only …"), where the
	// form is sent from ("use …") and what to reload ("reload … and send it again").
	only, from, reload string
}

// readForm reads a gate page's form strictly: urlencoded, bounded, only the fields
// rules know, those that do not repeat once, nothing in the query, sent from the gate's
// own origin (Sec-Fetch-Site, else Origin), and with the CSRF token. A refusal of a
// field or the token comes with what was read, for a page shown again with it.
func readForm(w http.ResponseWriter, r *http.Request, rules formRules) (formValues, error) {
	if err := rules.xorigin.Check(r); err != nil {
		return nil, contract.Errorf(contract.CodeCrossOrigin, "the form was sent from another origin; use %s.", rules.from)
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, contract.Errorf(contract.CodeUnsupportedMedia, "send the form as application/x-www-form-urlencoded, as the page does.")
	}
	if r.URL.RawQuery != "" {
		return nil, contract.Errorf(contract.CodeInvalidArgument, "the form takes no query; send its fields in the body.")
	}
	r.Body = http.MaxBytesReader(w, r.Body, rules.max)
	if err := r.ParseForm(); err != nil {
		return nil, contract.Errorf(contract.CodeInvalidArgument, "the form's body is not a form of at most %d bytes; send the page's form.", rules.max)
	}
	form := formValues(r.PostForm)
	for k, vs := range r.PostForm {
		known, repeats := rules.field(k)
		if !known {
			return form, contract.Errorf(contract.CodeInvalidArgument, "the form has no field %.40q; send %s.", k, rules.only)
		}
		if len(vs) != 1 && !repeats {
			return form, contract.Errorf(contract.CodeInvalidArgument, "the field %s is sent %d times; send it once.", k, len(vs))
		}
	}
	if !hmac.Equal([]byte(form.Get("csrf")), []byte(rules.csrf)) {
		return form, contract.Errorf(contract.CodeCSRF, "the form's CSRF token is missing or wrong; reload %s and send it again.", rules.reload)
	}
	return form, nil
}

type formValues map[string][]string

func (v formValues) Get(k string) string {
	if vs := v[k]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// save creates the Agent when it is new (keeping its token beside its runtime), writes
// the key into the Agent's key file (mode 0600), and sets the non-secret profile in the
// authority.
func (f *firstUse) save(ctx context.Context, m modelForm, key string) error {
	if !validAgentName(m.Agent) {
		return contract.Errorf(contract.CodeInvalidArgument, "the Agent's name is letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64; e.g. %s.", DefaultAgent)
	}
	if m.Provider == contract.ProviderScripted {
		return f.saveScripted(ctx, m)
	}
	if m.Provider != contract.ProviderOpenAI && m.Provider != contract.ProviderAnthropic {
		return contract.Errorf(contract.CodeInvalidArgument, "choose the OpenAI or the Anthropic wire format, or the scripted model.")
	}
	key = strings.TrimSpace(key)
	if strings.ContainsAny(key, "\r\n\x00") {
		return contract.Errorf(contract.CodeInvalidArgument, "the key is one line; paste it again.")
	}
	if key == "" && NeedsKey(m.Provider, m.URL) {
		return contract.Errorf(contract.CodeInvalidArgument, "this model needs a key: only an OpenAI-compatible server on loopback runs without one. Paste the key.")
	}
	spec := contract.ProfileSpec{Provider: m.Provider, ModelURL: m.URL, Model: m.Model, Enabled: true}
	if check := f.rts.cfg.CheckModel; check != nil && !m.NoCheck {
		// Before anything is made: a model that does not answer is said now, with the
		// endpoint's own words, rather than when the Agent's first task fails.
		if err := check(ctx, spec, key); err != nil {
			return err
		}
	}
	cl, err := f.rts.member()
	if err != nil {
		return err
	}
	id, err := f.agent(ctx, cl, m.Agent)
	if err != nil {
		return err
	}
	if key != "" {
		dir := filepath.Join(f.rts.cfg.Dir, AgentsDir, string(id))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("make the Agent's directory: %w", err)
		}
		if err := datadir.WritePrivate(filepath.Join(dir, ModelKeyFile), []byte(key+"\n")); err != nil {
			return fmt.Errorf("write the key file: %w", err)
		}
		spec.KeyFile = filepath.Join(AgentsDir, string(id), ModelKeyFile)
	}
	_, err = cl.SetProfile(ctx, f.rts.project(), string(id), spec)
	return err
}

// saveScripted gives the Agent the scripted model (no inference) playing the example's
// script, which the Get started page laid out in the data dir; the form's URL, model and
// key are for a real model and must be empty.
func (f *firstUse) saveScripted(ctx context.Context, m modelForm) error {
	if m.URL != "" || m.Model != "" {
		return contract.Errorf(contract.CodeInvalidArgument, "the scripted model runs no model: leave the model URL and the model empty, or choose a wire format.")
	}
	if !exampleInstalled(f.rts.cfg.Dir) {
		return contract.Errorf(contract.CodeInvalidArgument, "the scripted model plays the example's script, and the example is not installed; install it from the console's Get started page first.")
	}
	cl, err := f.rts.member()
	if err != nil {
		return err
	}
	id, err := f.agent(ctx, cl, m.Agent)
	if err != nil {
		return err
	}
	_, err = cl.SetProfile(ctx, f.rts.project(), string(id), contract.ProfileSpec{Provider: contract.ProviderScripted, Script: ExampleScript, Enabled: true})
	return err
}

// agent returns the id of the Agent called name, creating it when there is none and
// keeping the token it was made with beside its runtime.
func (f *firstUse) agent(ctx context.Context, cl *apiclient.Client, name string) (contract.AgentID, error) {
	agents, err := apiclient.All[contract.Agent](ctx, cl, apiclient.ProjectPath(f.rts.project(), "agents"))
	if err != nil {
		return "", err
	}
	for _, a := range agents {
		if a.Name == name && a.RevokedAt == nil {
			return a.ID, nil
		}
	}
	var at contract.AgentToken
	if err := cl.Do(ctx, http.MethodPost, apiclient.ProjectPath(f.rts.project(), "agents"), contract.CreateAgentRequest{Name: name}, &at); err != nil {
		return "", err
	}
	if err := saveAgentToken(filepath.Join(f.rts.cfg.Dir, AgentsDir, string(at.Agent.ID)), at.Token); err != nil {
		return "", err
	}
	return at.Agent.ID, nil
}

// needsModel reports whether the project has no profile yet, so the browser's first
// visit asks for the default model; an error reads as no.
func (f *firstUse) needsModel(ctx context.Context) bool {
	cl, err := f.rts.member()
	if err != nil {
		return false
	}
	ps, err := cl.Profiles(ctx, f.rts.project())
	return err == nil && len(ps) == 0
}

// teachingOf is what the form shows of a refusal: the authority's teaching, else the
// error.
func teachingOf(err error) string {
	if ce, ok := errors.AsType[*contract.Error](err); ok && ce.Teaching != "" {
		return ce.Teaching
	}
	return err.Error()
}
