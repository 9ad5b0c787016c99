package contract

// CapabilityContent is an installed release as a member reads it before trusting it: its
// Case Types, its Actions with their parameters, bindings and approval, the Sources it
// needs and the text of its rule files.
type CapabilityContent struct {
	Release     Release           `json:"release"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	CaseTypes   []CaseTypeContent `json:"caseTypes"`
	Actions     []ActionContent   `json:"actions"`
	Sources     []Source          `json:"sources"` // what the release needs; Connection and Digest are empty
	Rules       []RuleFile        `json:"rules"`
}

// CaseTypeContent is one Case Type a release declares.
type CaseTypeContent struct {
	CaseTypeEntry
	Description  string `json:"description,omitempty"`
	KeyPredicate string `json:"keyPredicate,omitempty"`
}

// ActionContent is one Action a release declares. Bindings fill a parameter from a
// variable its preconditions bind; Approval is none, person or a delegation class; Tool,
// Kind and Source are empty for a Board-only Action.
type ActionContent struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Params      []ParamEntry    `json:"params"`
	Bindings    []ActionBinding `json:"bindings"`
	Approval    string          `json:"approval"`
	Tool        string          `json:"tool,omitempty"`
	Kind        string          `json:"kind,omitempty"` // read, write or run
	Source      string          `json:"source,omitempty"`
}

// ActionBinding fills parameter Param from variable Var of the Action's preconditions.
type ActionBinding struct {
	Param string `json:"param"`
	Var   string `json:"var"`
}

// RuleFile is one rule file of a release, as it was installed.
type RuleFile struct {
	Name string `json:"name"`
	Text string `json:"text"`
}
