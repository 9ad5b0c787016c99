package contract

import (
	"bytes"
	"encoding/json"
	"reflect"
	"time"
)

// Error codes of the worker hop's leases. Either refusal means the worker
// drops its lease and acquires a new one with a startup Poll.
const (
	CodeLeaseExpired    Code = "worker_lease_expired"    // the lease named is past its expiry
	CodeLeaseSuperseded Code = "worker_lease_superseded" // a newer generation holds the Connection's lease
	CodeWorkBody        Code = "work_body"               // a /work body that is not one known operation
)

// Kinds of /work operations.
const (
	WorkPoll         = "Poll"
	WorkRenewLease   = "RenewLease"
	WorkReleaseLease = "ReleaseLease"
	WorkClaim        = "Claim"
	WorkReport       = "Report"
)

// WorkBody is the body of POST /work: {"operation": {"kind": …, …fields of that kind}}.
// Exactly one of the pointers is set, matching Kind. Decoding is strict: an unknown kind
// or field is refused.
type WorkBody struct {
	Operation WorkOperation `json:"operation"`
}

// WorkOperation is one hop operation. Its JSON is flat: "kind" beside the fields of the
// request it names.
type WorkOperation struct {
	Kind         string
	Poll         *PollRequest
	RenewLease   *LeaseRequest
	ReleaseLease *LeaseRequest
	Claim        *ClaimRequest
	Report       *ReportRequest
}

// PollRequest long-polls for work. The first poll of a process carries no generation and
// acquires a lease; re-sending that same startup poll is one acquisition.
type PollRequest struct {
	WorkerID   string           `json:"workerId"`
	Generation *int64           `json:"workerGeneration,omitempty"`
	Tools      []ToolDescriptor `json:"tools"`
	// Max is the most rows the worker will start now (its free slots); 0 (or less) or absent: as
	// many as the authority serves in one Poll. Several workers share a Connection's
	// queue, so a worker asks only for what it can run, and the rest go to the others.
	Max int `json:"max,omitempty"`
	// VaultSources names the Sources the worker's vault holds: names only, never a value,
	// so the Tools page can say which bound Sources this worker can run against.
	VaultSources []string `json:"vaultSources,omitempty"`
}

// LeaseRequest renews (RenewLease) or gives up (ReleaseLease) the lease held.
type LeaseRequest struct {
	WorkerID   string `json:"workerId"`
	Generation int64  `json:"workerGeneration"`
}

// ClaimRequest claims one served row before it runs.
type ClaimRequest struct {
	ID         string `json:"id"`
	WorkerID   string `json:"workerId"`
	Generation int64  `json:"workerGeneration"`
	Grant      string `json:"grant"`
}

// ReportRequest reports the outcome of a claimed row. A retry sends the same bytes;
// nothing is ever re-executed. Generation is the one the row was claimed under.
// EffectUnknown is set, with OK false, when the call failed after its effect may have
// happened: the worker never guesses, and a person reconciles it.
type ReportRequest struct {
	ID            string      `json:"id"`
	OK            bool        `json:"ok"`
	EffectUnknown bool        `json:"effectUnknown,omitempty"`
	Result        *WorkResult `json:"result,omitempty"`
	Code          Code        `json:"errorCode,omitempty"`
	Reason        string      `json:"reason,omitempty"`
	Facts         []Atom      `json:"facts,omitempty"`
	WorkerID      string      `json:"workerId"`
	Generation    int64       `json:"workerGeneration"`
	Grant         string      `json:"grant"`
}

// WorkResult is what a Tool returned: one Args per row, keyed by column.
type WorkResult struct {
	Rows []Args `json:"rows"`
}

// Lease is a worker instance's hold on its Connection. HeartbeatAfterMs says when to renew.
type Lease struct {
	WorkerID         string    `json:"workerId"`
	Generation       int64     `json:"workerGeneration"`
	ExpiresAt        time.Time `json:"expiresAt"`
	ServerTime       time.Time `json:"serverTime"`
	HeartbeatAfterMs int64     `json:"heartbeatAfterMs"`
}

// WorkAnswer answers every /work operation. Poll fills Lease and Work; RenewLease fills
// Lease; the others only say whether they were accepted. A refusal carries a code and a
// teaching sentence.
type WorkAnswer struct {
	Accepted bool      `json:"accepted"`
	Code     Code      `json:"errorCode,omitempty"`
	Teaching string    `json:"teaching,omitempty"`
	Lease    *Lease    `json:"lease,omitempty"`
	Work     []WorkRow `json:"work,omitempty"`
}

// WorkRow is one served call. Args, Target and ToolSpec are kept as
// the exact bytes served, because the grant's request digest is computed over them. The
// shape is closed: a row with an unknown field is refused whoever decodes it.
type WorkRow struct {
	ID         string          `json:"id"`         // the work id that Claim and Report name
	Project    ProjectID       `json:"project"`    // the Board's project
	Invocation string          `json:"invocation"` // the Operation id
	Action     string          `json:"action"`
	Args       json.RawMessage `json:"args"`     // the call's arguments after bindings: a JSON object of scalars
	Target     json.RawMessage `json:"target"`   // a [WorkTarget]
	ToolSpec   json.RawMessage `json:"toolSpec"` // a [WorkToolSpec]
	Grant      string          `json:"grant"`
	// TraceParent is the W3C traceparent of the dispatch that served the row, when the
	// authority traces: the worker's execution continues the governed call's trace. It
	// is outside the grant's digest.
	TraceParent string `json:"traceparent,omitempty"`
}

// WorkTarget names the Source a call runs against; all fields are empty for a
// source-free Tool.
type WorkTarget struct {
	Source       string `json:"source"`
	SourceType   string `json:"sourceType"`
	SourceDigest string `json:"sourceDigest"` // "sha256:…" of the Source record
}

// WorkToolSpec names the Tool definition the call was locked to.
type WorkToolSpec struct {
	Tool   ToolID `json:"tool"`
	Digest string `json:"digest"` // "sha256:…" of the Tool's definition
	Kind   string `json:"kind"`
}

// UnmarshalJSON decodes a row strictly: unknown fields, trailing data and missing parts
// are refused with a work_row error.
func (r *WorkRow) UnmarshalJSON(b []byte) error {
	n, err := parseStrict(b)
	if err != nil {
		return rowMalformed(err)
	}
	return r.decodeTree(b, n)
}

// decodeTree is UnmarshalJSON on text DecodeStrict has parsed into n.
func (r *WorkRow) decodeTree(b []byte, n *jnode) error {
	var p plainRow
	if err := decodeChecked(b, n, &p); err != nil {
		return rowMalformed(err)
	}
	if err := WorkRow(p).complete(); err != nil {
		return err
	}
	*r = WorkRow(p)
	return nil
}

// plainRow is a WorkRow without its UnmarshalJSON.
type plainRow WorkRow

// complete refuses a row that lacks a part the worker checks.
func (r WorkRow) complete() error {
	if r.ID == "" || r.Grant == "" || len(r.Args) == 0 || len(r.Target) == 0 || len(r.ToolSpec) == 0 {
		return Errorf(CodeWorkRow, "a served work row lacks its id, args, target, toolSpec or grant; the authority must serve complete rows.")
	}
	return nil
}

// RowParts are a served row's target, tool spec and arguments, each decoded strictly
// from the row's bytes for it ([WorkRow.Target], …) with an error of its own: the worker
// checks them in its own order (docs/workers.md).
type RowParts struct {
	Target      WorkTarget
	TargetErr   error
	ToolSpec    WorkToolSpec
	ToolSpecErr error
	Args        Args
	ArgsErr     error
}

// Parts decodes r's target, tool spec and arguments, each with DecodeStrict.
func (r WorkRow) Parts() RowParts {
	var p RowParts
	p.TargetErr = DecodeStrict(r.Target, &p.Target)
	p.ToolSpecErr = DecodeStrict(r.ToolSpec, &p.ToolSpec)
	p.ArgsErr = DecodeStrict(r.Args, &p.Args)
	return p
}

// ServedWork is a /work answer as a worker reads it: [WorkAnswer], with each served row
// decoded on its own, so that one malformed row is refused without losing the others.
// DecodeStrict parses it once: each row, and its target, tool spec and arguments, is
// decoded from that parse, where reading the answer, then each row, then each of its
// parts from their bytes parsed the row's text three times (benchmarks/README.md,
// "Where a governed action's time goes"). What it decodes, and every refusal, is what
// those decodes give.
type ServedWork struct {
	Accepted bool
	Code     Code
	Teaching string
	Lease    *Lease
	Rows     []ServedRow
}

// ServedRow is one row of a [ServedWork].
type ServedRow struct {
	Raw   json.RawMessage // the row as served
	Row   WorkRow         // the row; when Err is nil
	Err   error           // what DecodeStrict(Raw, &WorkRow{}) refuses
	Parts RowParts        // Row.Parts(); when Err is nil
}

// servedAnswer is the answer ServedWork is read as, its rows left as text: the shape,
// strictness and refusals of a worker's reading of a /work answer.
type servedAnswer struct {
	Accepted bool              `json:"accepted"`
	Code     Code              `json:"errorCode,omitempty"`
	Teaching string            `json:"teaching,omitempty"`
	Lease    *Lease            `json:"lease,omitempty"`
	Work     []json.RawMessage `json:"work,omitempty"`
}

// decodeTree decodes the answer n, parsed from b, as DecodeStrict decodes a
// servedAnswer, then each row from its node.
func (w *ServedWork) decodeTree(b []byte, n *jnode) error {
	var a servedAnswer
	if err := decodeChecked(b, n, &a); err != nil {
		return err
	}
	var work *jnode
	for i, k := range n.keys() {
		if k == "work" && n.kids()[i].kind == '[' && len(n.kids()[i].kids()) == len(a.Work) {
			work = n.kids()[i]
		}
	}
	*w = ServedWork{Accepted: a.Accepted, Code: a.Code, Teaching: a.Teaching, Lease: a.Lease}
	if a.Work != nil {
		w.Rows = make([]ServedRow, len(a.Work))
	}
	for i, raw := range a.Work {
		var rn *jnode
		if work != nil {
			rn = work.kids()[i]
		}
		w.Rows[i] = servedRow(b, rn, raw)
	}
	return nil
}

// servedRow decodes raw, a served row, from its node n in b (nil: none) when the tree
// decode takes it, else from raw as DecodeStrict does, refusal and all.
func servedRow(b []byte, n *jnode, raw json.RawMessage) ServedRow {
	s := ServedRow{Raw: raw}
	if n != nil {
		var p plainRow
		if walkType(n, reflect.TypeFor[plainRow](), "") == nil && decodeFromTree(b, n, &p) && WorkRow(p).complete() == nil {
			s.Row = WorkRow(p)
			for i, k := range n.keys() {
				switch k {
				case "target":
					s.Parts.TargetErr = decodeInside(b, n.kids()[i], &s.Parts.Target)
				case "toolSpec":
					s.Parts.ToolSpecErr = decodeInside(b, n.kids()[i], &s.Parts.ToolSpec)
				case "args":
					s.Parts.ArgsErr = decodeInside(b, n.kids()[i], &s.Parts.Args)
				}
			}
			return s
		}
	}
	if s.Err = DecodeStrict(raw, &s.Row); s.Err == nil {
		s.Parts = s.Row.Parts()
	}
	return s
}

// decodeInside decodes n, a value inside b, into v, a pointer to a zero value, as
// DecodeStrict(b[n.start:n.end], v) does: from the tree when it takes it, else with
// DecodeStrict itself, refusal and all, into v zeroed again.
func decodeInside(b []byte, n *jnode, v any) error {
	if walkType(n, reflect.TypeOf(v).Elem(), "") == nil && decodeFromTree(b, n, v) {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	return DecodeStrict(b[n.start:n.end], v)
}

func rowMalformed(err error) error {
	return Errorf(CodeWorkRow, "a served work row is malformed (%v); the authority and worker disagree on the hop contract, upgrade one of them.", err)
}

// MarshalJSON writes the operation flat: "kind" beside its request's fields.
func (o WorkOperation) MarshalJSON() ([]byte, error) {
	var inner any
	switch o.Kind {
	case WorkPoll:
		inner = o.Poll
	case WorkRenewLease:
		inner = o.RenewLease
	case WorkReleaseLease:
		inner = o.ReleaseLease
	case WorkClaim:
		inner = o.Claim
	case WorkReport:
		inner = o.Report
	default:
		return nil, Errorf(CodeWorkBody, "work operation kind %q is unknown; use Poll, RenewLease, ReleaseLease, Claim or Report.", o.Kind)
	}
	body, err := json.Marshal(inner)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(body, []byte("null")) {
		return nil, Errorf(CodeWorkBody, "work operation %s has no request; fill the field named by its kind.", o.Kind)
	}
	kind, err := json.Marshal(o.Kind)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(`{"kind":,`)+len(kind)+len(body))
	out = append(append(out, `{"kind":`...), kind...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// UnmarshalJSON reads "kind" and decodes the rest strictly into the request it names.
func (o *WorkOperation) UnmarshalJSON(b []byte) error {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return Errorf(CodeWorkBody, "a work operation is not a JSON object with a kind; send {\"kind\": \"Poll\", …}.")
	}
	out, err := decodeOperation(head.Kind, func(v any) error { return DecodeStrict(b, v) })
	if err != nil {
		return err
	}
	*o = out
	return nil
}

// decodeOperation decodes the operation of kind with decode, which decodes its text
// strictly into the value it is given.
func decodeOperation(kind string, decode func(v any) error) (WorkOperation, error) {
	var err error
	out := WorkOperation{Kind: kind}
	switch kind {
	case WorkPoll:
		var v struct {
			Kind string `json:"kind"`
			PollRequest
		}
		err, out.Poll = decode(&v), &v.PollRequest
	case WorkRenewLease, WorkReleaseLease:
		var v struct {
			Kind string `json:"kind"`
			LeaseRequest
		}
		err = decode(&v)
		if kind == WorkRenewLease {
			out.RenewLease = &v.LeaseRequest
		} else {
			out.ReleaseLease = &v.LeaseRequest
		}
	case WorkClaim:
		var v struct {
			Kind string `json:"kind"`
			ClaimRequest
		}
		err, out.Claim = decode(&v), &v.ClaimRequest
	case WorkReport:
		var v struct {
			Kind string `json:"kind"`
			ReportRequest
		}
		err, out.Report = decode(&v), &v.ReportRequest
	default:
		return WorkOperation{}, Errorf(CodeWorkBody, "work operation kind %.40q is unknown; use Poll, RenewLease, ReleaseLease, Claim or Report.", kind)
	}
	if c := CodeOf(err); c != "" && c != CodeInvalidArgument {
		return WorkOperation{}, err // a strict-JSON refusal keeps its own code
	}
	if err != nil {
		return WorkOperation{}, Errorf(CodeWorkBody, "work operation %s is malformed (%v); send only the fields of its kind (docs/workers.md lists them).", kind, err)
	}
	return out, nil
}

// decodeTree decodes a /work body DecodeStrict has parsed into n, parsing it once: the
// operation is decoded from its part of the text and its node, where through
// encoding/json WorkOperation.UnmarshalJSON would read its kind with one more decode and
// parse it again. Only the common shape — exactly the key "operation", an object whose
// "kind" is a string naming a kind, decoding without error — takes that path; anything
// else is decoded as before, parse and all, so every refusal stays the one it was.
func (w *WorkBody) decodeTree(b []byte, n *jnode) error {
	if err := walkType(n, reflect.TypeFor[WorkBody](), ""); err != nil {
		return err
	}
	if n.kind == '{' && len(n.keys()) == 1 && n.keys()[0] == "operation" {
		if op, ok := operationFromTree(b, n.kids()[0]); ok {
			*w = WorkBody{Operation: op}
			return nil
		}
	}
	return decodeStrict(b, w)
}

// operationFromTree decodes the operation n from b, the text it was parsed from, when it
// has exactly the key "kind" holding a string (the parse refused any key differing from
// it only in case, so encoding/json would read that kind too) and decodes without error.
func operationFromTree(b []byte, n *jnode) (WorkOperation, bool) {
	if n.kind != '{' {
		return WorkOperation{}, false
	}
	kind, found := "", false
	for i, k := range n.keys() {
		if k == "kind" && n.kids()[i].kind == '"' {
			kind, found = n.kids()[i].str, true
		}
	}
	if !found {
		return WorkOperation{}, false
	}
	op, err := decodeOperation(kind, func(v any) error { return decodeNode(b, n, v) })
	return op, err == nil
}
