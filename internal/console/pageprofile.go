package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// modelForm is the Agent page's form of how its runtime sends model requests: thinking,
// retries and deadlines, the settings docket agent profile set takes as --thinking,
// --model-attempts, --model-retry-wait-seconds, --model-first-byte-seconds and
// --model-idle-seconds (docs/workbench.md). Its values are as typed, so a refused form
// is shown again as it was sent.
type modelForm struct {
	Thinking                             string // "default", "on" or "off"
	Attempts, RetryWait, FirstByte, Idle string // "" is the runtime's default
	// Field is the id of the input the refusal names ("" when it names none), and Error
	// the refusal, which names the field.
	Field, Error string
}

// modelFormOf is the form as p sets it now.
func modelFormOf(p contract.ProfileSpec) modelForm {
	n := func(v int) string {
		if v == 0 {
			return ""
		}
		return strconv.Itoa(v)
	}
	return modelForm{Thinking: cmpThinking(p.Thinking), Attempts: n(p.ModelAttempts), RetryWait: n(p.ModelRetryWaitSeconds),
		FirstByte: n(p.ModelFirstByteSeconds), Idle: n(p.ModelIdleSeconds)}
}

func cmpThinking(t string) string {
	if t == "" {
		return "default"
	}
	return t
}

// modelField is one number of the form: its input's id, the words that name it on the
// page, and its bound.
type modelField struct {
	id, label string
	value     *string
	max       int
	set       *int
}

// apply puts f into p, or returns the field it refuses and a sentence that names it.
func (f *modelForm) apply(p *contract.ProfileSpec) (field string, err error) {
	switch f.Thinking {
	case "default":
		p.Thinking = ""
	case contract.ThinkingOn, contract.ThinkingOff:
		p.Thinking = f.Thinking
	default:
		return "model-thinking", contract.Errorf(contract.CodeInvalidArgument, "Thinking %.20q is not a choice; choose the provider's default, on or off.", f.Thinking)
	}
	fields := []modelField{
		{"model-attempts", "Attempts", &f.Attempts, contract.MaxModelAttempts, &p.ModelAttempts},
		{"model-retry-wait", "Total retry wait", &f.RetryWait, contract.MaxModelRetryWaitSeconds, &p.ModelRetryWaitSeconds},
		{"model-first-byte", "First-byte deadline", &f.FirstByte, contract.MaxModelDeadlineSeconds, &p.ModelFirstByteSeconds},
		{"model-idle", "Idle deadline", &f.Idle, contract.MaxModelDeadlineSeconds, &p.ModelIdleSeconds},
	}
	for _, x := range fields {
		s := strings.TrimSpace(*x.value)
		*x.value = s
		if s == "" {
			*x.set = 0
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > x.max {
			return x.id, contract.Errorf(contract.CodeInvalidArgument, "%s %q is not a whole number from 0 to %d; give one, or leave it empty for the runtime's default.", x.label, truncateForm(s), x.max)
		}
		*x.set = n
	}
	return "", nil
}

// truncateForm bounds a typed value quoted back in a refusal.
func truncateForm(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// pageSetModel sets how an Agent's runtime sends model requests from its page, for a
// member: the form's settings replace those of its profile, the rest of which is kept.
// A refused form is shown again as sent, with the refusal naming the field.
func (s *Server) pageSetModel(w http.ResponseWriter, r *http.Request, v visit) error {
	ctx := r.Context()
	p, err := s.auth.AgentProfile(ctx, v.caller, v.project, r.PathValue("agent"))
	if err != nil {
		return err
	}
	form := modelForm{Thinking: r.PostFormValue("thinking"), Attempts: r.PostFormValue("attempts"), RetryWait: r.PostFormValue("retry_wait"),
		FirstByte: r.PostFormValue("first_byte"), Idle: r.PostFormValue("idle")}
	spec := p.ProfileSpec
	field, err := form.apply(&spec)
	if err == nil {
		_, err = s.auth.SetAgentProfile(ctx, v.caller, v.project, string(p.Agent), spec)
	}
	if err != nil {
		msg, status, err := shownRefusal(err)
		if err != nil {
			return err
		}
		form.Field, form.Error = field, msg
		return s.showAgent(w, r, v, status, taskForm{}, &form)
	}
	return redirectNotice(w, r, "/projects/"+url.PathEscape(string(v.project))+"/agents/"+url.PathEscape(string(p.Agent)), noticeModelSet)
}

// Invalid says whether the refusal names the input id, for its aria-invalid.
func (f modelForm) Invalid(id string) bool { return f.Error != "" && f.Field == id }
