package workbench

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/secheaders"
	"github.com/docketrun/docket/internal/supervisor"
)

// ExamplePath is docket start's own route that installs the verified-calculation example
// for the console's Get started page (docs/quickstart.md). It is served by this process
// behind the run-key gate, never by serve: it writes the worker's vault, which holds the
// workspace's root, and restarts the worker to read it, and the authority holds neither.
const ExamplePath = "/start/example"

// ExampleDir is the directory of the data dir the example is laid out in: capability/,
// workspace/ (the Source's root) and script.json (the scripted model's script).
const ExampleDir = "example"

// ExampleScript is the example's script, relative to the data dir, as a scripted
// profile names it.
var ExampleScript = filepath.Join(ExampleDir, "script.json")

// exampleFields are the install form's fields; any other is refused.
var exampleFields = []string{"csrf", "approval"}

// ExampleToken is the CSRF token of the Get started page's install form. The console
// renders the form and docket start checks it, so it is derived from what both hold and
// no page outside the gate has seen: serve's path key, which docket start made for this
// run and handed to serve alone. It authorizes nothing by itself: the form still needs
// the run key's cookie and the gate's own origin.
func ExampleToken(serveKey string) string {
	m := hmac.New(sha256.New, []byte(serveKey))
	m.Write([]byte("docket start: install the example"))
	return hex.EncodeToString(m.Sum(nil))
}

// ExampleSpec is what [Config.InstallExample] is asked to do.
type ExampleSpec struct {
	Dir      string // where to lay the example out: the data dir's ExampleDir
	Manifest string // the worker's tool manifest, whose digests the Tools are locked at
	Vault    string // the worker's vault, docket start's own, to add the workspace Source to
	Approve  bool   // write_result needs a person's approval
}

// exampleInstaller serves ExamplePath. It is safe for concurrent use; installs run one
// at a time.
type exampleInstaller struct {
	rts     *runtimes
	token   string
	spec    ExampleSpec
	worker  supervisor.Child // restarted once the vault names the workspace
	xorigin *http.CrossOriginProtection

	mu sync.Mutex // one install at a time
}

var examplePage = sync.OnceValue(func() *template.Template { return template.Must(template.ParseFS(webFS, "web/example.html")) })

func (x *exampleInstaller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secheaders.Set(w.Header())
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeGateError(w, http.StatusMethodNotAllowed, contract.Errorf(contract.CodeInvalidArgument,
			"%s takes the Get started page's form (POST); open the console's Get started page.", ExamplePath))
		return
	}
	spec, err := x.decode(w, r)
	if err != nil {
		ce, _ := errors.AsType[*contract.Error](err)
		if ce != nil && (ce.Code == contract.CodeCSRF || ce.Code == contract.CodeCrossOrigin) {
			writeGateError(w, http.StatusForbidden, ce)
			return
		}
		x.refuse(w, http.StatusBadRequest, err)
		return
	}
	if err := x.install(r.Context(), spec); err != nil {
		x.refuse(w, http.StatusBadRequest, err)
		return
	}
	x.rts.Sync()
	notice := "The verified-calculation example is installed: its capability, the workspace Source and its two Tools; the worker restarted to read the workspace."
	http.Redirect(w, r, "/projects/"+url.PathEscape(x.rts.project())+"/get-started?notice="+url.QueryEscape(notice), http.StatusSeeOther)
}

// decode reads the form as the first-use form is read (readForm): only its own fields,
// each once.
func (x *exampleInstaller) decode(w http.ResponseWriter, r *http.Request) (ExampleSpec, error) {
	form, err := readForm(w, r, formRules{
		xorigin: x.xorigin, csrf: x.token, max: maxFormBody,
		field: func(k string) (known, repeats bool) { return contains(exampleFields, k), false },
		only:  "only " + strings.Join(exampleFields, ", "),
		from:  "the console's Get started page", reload: "the Get started page",
	})
	if err != nil {
		return ExampleSpec{}, err
	}
	spec := x.spec
	switch form.Get("approval") {
	case "person":
		spec.Approve = true
	case "none", "":
	default:
		return ExampleSpec{}, contract.Errorf(contract.CodeInvalidArgument, "approval is person (the write waits for a person) or none; send one of them.")
	}
	return spec, nil
}

// install lays the example out and sets it up through the hook, then restarts the worker
// so that it reads the vault that now names the workspace.
func (x *exampleInstaller) install(ctx context.Context, spec ExampleSpec) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.rts.cfg.Vault != "" {
		return contract.Errorf(contract.CodeInvalidArgument,
			"docket start was given --vault %s, which is yours to edit: add the example's workspace Source to it, or start without --vault to let the Get started page install the example.", x.rts.cfg.Vault)
	}
	if x.rts.cfg.InstallExample == nil {
		return contract.Errorf(contract.CodeInternal, "this docket start cannot install the example; run docket demo --keep DIR instead.")
	}
	if err := x.rts.cfg.InstallExample(ctx, x.rts.base, spec); err != nil {
		return err
	}
	sup := x.rts.sup
	if err := sup.Stop(ctx, x.worker.Name); err != nil {
		return fmt.Errorf("stop the worker to restart it with the workspace: %w", err)
	}
	if err := sup.Start(x.worker); err != nil {
		return fmt.Errorf("restart the worker with the workspace (see %s): %w", sup.LogPath(x.worker.Name), err)
	}
	return nil
}

// refuse shows why the example was not installed, on a page that leads back.
func (x *exampleInstaller) refuse(w http.ResponseWriter, status int, err error) {
	var b strings.Builder
	back := "/projects/" + url.PathEscape(x.rts.project()) + "/get-started"
	if terr := examplePage().Execute(&b, struct{ Error, Back string }{teachingOf(err), back}); terr != nil {
		writeGateError(w, http.StatusInternalServerError, contract.Errorf(contract.CodeInternal, "the refusal could not be shown; see docket start's output."))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	// The status is sent; a browser that went away has nothing to learn.
	w.Write([]byte(b.String()))
}

// exampleInstalled reports whether the example is laid out in the data dir, so that a
// scripted profile can name its script.
func exampleInstalled(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ExampleScript))
	return err == nil
}
