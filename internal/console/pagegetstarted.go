package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
)

// Workbench is what the console knows of the docket start it runs under (Config.Workbench).
type Workbench struct {
	ExamplePath  string // docket start's route that installs the example, e.g. /start/example
	ExampleToken string // the install form's CSRF token, which docket start checks
	ModelPath    string // docket start's form that gives an Agent a model, e.g. /start/model
	ToolsPath    string // docket start's page that adds an MCP server or a template to its worker, e.g. /start/tools
	// MaterialsPath is docket start's route that takes an Agent page's Add files form,
	// with MaterialsToken as its CSRF token (docs/materials.md); "": no such form.
	MaterialsPath  string
	MaterialsToken string
}

// The verified-calculation example as the Get started page offers it: the Case Type
// that tells it is installed, and the task that runs it (docs/quickstart.md).
const (
	exampleCaseType = "verified_calculation"
	exampleKey      = `{"job_id": "calc-001"}`
	exampleTask     = "Run the verified calculation for job calc-001: load data/input.json, open its Case, write the derived result to out/result.json, verify it, and close the Case as completed."
)

// getStartedBody is what the Get started page shows: each step, done or not, and the
// forms that take the next one.
type getStartedBody struct {
	Workbench *Workbench
	Example   *contract.CapabilityContent // the installed release with the example's Case Type; nil when none
	Approval  string                      // who must approve the example's write; "" when not installed
	Agents    []getStartedAgent           // the project's Agents that have a model
	CaseType  string
	Key       string
	Task      string
}

// getStartedAgent is one Agent with a model, which the page can give the example's task.
type getStartedAgent struct {
	ID       contract.AgentID
	Name     string
	Provider string
	Runtime  string // its runtime's state as docket start last reported it; "" when never
}

// pageGetStarted shows the steps from an empty project to a governed, approved,
// certified task: install the example, connect tools, give an Agent a model, give it a
// task. Under docket start the first and third are its own forms; with serve alone the
// page gives the commands.
func (s *Server) pageGetStarted(w http.ResponseWriter, r *http.Request, v visit) error {
	b, err := s.getStarted(r.Context(), v)
	if err != nil {
		return err
	}
	return s.render(w, r, v, http.StatusOK, "getstarted", b, event.CapabilityInstalled, event.AgentCreated, event.ProfileSet)
}

func (s *Server) getStarted(ctx context.Context, v visit) (getStartedBody, error) {
	b := getStartedBody{Workbench: s.workbench, CaseType: exampleCaseType, Key: exampleKey, Task: exampleTask}
	cs, err := s.auth.Capabilities(ctx, v.caller, v.project)
	if err != nil {
		return b, err
	}
	for i, c := range cs {
		for _, ct := range c.CaseTypes {
			if ct.Name == exampleCaseType {
				b.Example = &cs[i]
			}
		}
	}
	if b.Example != nil {
		for _, a := range b.Example.Actions {
			if a.Name == "write_result" {
				b.Approval = a.Approval
			}
		}
	}
	ps, err := s.auth.AgentProfiles(ctx, v.caller, v.project)
	if err != nil {
		return b, err
	}
	for _, p := range ps {
		a := getStartedAgent{ID: p.Agent, Name: p.AgentName, Provider: p.Provider}
		if p.Runtime != nil {
			a.Runtime = string(p.Runtime.State)
		}
		b.Agents = append(b.Agents, a)
	}
	return b, nil
}

// emptyProject reports whether the project has nothing in it yet — no capability and no
// Agent — so that its home is the Get started page.
func (s *Server) emptyProject(ctx context.Context, v visit) (bool, error) {
	cs, err := s.auth.Capabilities(ctx, v.caller, v.project)
	if err != nil || len(cs) > 0 {
		return false, err
	}
	as, err := s.ids.Agents(ctx, v.caller, v.project)
	return len(as) == 0, err
}
