package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/docketrun/docket/internal/contract"
)

// caseCmd reads a project's Cases.
type caseCmd struct {
	List   caseListCmd   `cmd:"" help:"List the project's Cases."`
	Show   caseShowCmd   `cmd:"" help:"Show one Case."`
	Pause  casePauseCmd  `cmd:"" help:"Pause a running Case with a member's hold."`
	Resume caseResumeCmd `cmd:"" help:"Release a member's hold on a paused Case."`
}

type caseListCmd struct {
	clientFlags
}

func (c *caseListCmd) Help() string {
	return `Examples:
  docket case list
  docket case list -o json`
}

func (c *caseListCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	items, err := list[contract.Case](ctx, cl, projectPath(c.Project, "cases"))
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, items)
	}
	rows := make([][]string, 0, len(items))
	for _, cs := range items {
		rows = append(rows, []string{string(cs.CaseID), cs.CaseType, string(cs.Status), string(cs.Disposition)})
	}
	return writeList(e, []string{"case", "type", "status", "disposition"}, rows,
		"no Cases in project "+c.Project+"; an Agent opens one with OpenCase")
}

type caseShowCmd struct {
	clientFlags
	ID  string `arg:"" name:"case" help:"Case id."`
	Why bool   `help:"Also print the acceptance's derivation tree (as docket why prints it)."`
}

func (c *caseShowCmd) Help() string {
	return `Prints the Case's record and pins, its receipt once it is closed, the acceptance node that
certifies its root, and the facts the acceptance rests on, each with its tier and where it
comes from (who asserted it, or which Tool attested it against which Source). Before the
Case is certified, the facts listed are those naming its business key.

Examples:
  docket case show case-1
  docket case show case-1 --why
  docket case show case-1 -o json`
}

// writeCaseOperations writes the Operations that executed Actions in Case id, each with
// the model turn that proposed it, read from its Agent's saved conversations.
func writeCaseOperations(ctx context.Context, sb *strings.Builder, cl *client, project string, id contract.CaseID) error {
	ops, err := cl.api.Operations(ctx, project, "", false)
	if err = credential(err); err != nil {
		return err
	}
	proposers := map[contract.AgentID]map[int64]contract.Proposer{}
	first := true
	for _, op := range ops {
		if op.CaseID != id {
			continue
		}
		if first {
			sb.WriteString("operations:\n")
			first = false
		}
		byOrdinal, ok := proposers[op.Agent]
		if !ok {
			byOrdinal = map[int64]contract.Proposer{}
			proposers[op.Agent] = byOrdinal
			cs, err := cl.api.Conversations(ctx, project, string(op.Agent))
			if err = credential(err); err != nil {
				return err
			}
			for _, sum := range cs {
				conv, err := cl.api.Conversation(ctx, project, string(op.Agent), string(sum.ID))
				if err = credential(err); err != nil {
					return err
				}
				maps.Copy(byOrdinal, contract.ProposersOf(conv))
			}
		}
		fmt.Fprintf(sb, "  %s %s — %s", op.Work, op.Label, op.State)
		if p, ok := byOrdinal[op.Ordinal]; ok {
			sb.WriteString(" — " + p.String())
		}
		sb.WriteString("\n")
	}
	return nil
}

func (c *caseShowCmd) Run(ctx context.Context, e *env) error {
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	d, err := cl.api.CaseDetail(ctx, c.Project, c.ID)
	if err = credential(err); err != nil {
		return err
	}
	if c.json() {
		return printJSON(e.Stdout, d)
	}
	var sb strings.Builder
	cs := d.Case
	fmt.Fprintf(&sb, "case %s (%s)\nstatus %s", cs.CaseID, cs.CaseType, cs.Status)
	if cs.Disposition != "" {
		fmt.Fprintf(&sb, ", %s", cs.Disposition)
	}
	if cs.Reason != "" {
		fmt.Fprintf(&sb, ": %s", cs.Reason)
	}
	key, err := json.Marshal(cs.BusinessKey)
	if err != nil {
		return fmt.Errorf("encode the business key: %w", err)
	}
	fmt.Fprintf(&sb, "\nbusiness key %s\nroot %s\nrelease %s (%s)\ncontract %s\nopened by %s at %s\n",
		key, cs.Root, cs.Release, cs.ReleaseDigest, cs.ContractDigest, cs.OpenedBy, cs.OpenedAt.Format(time.RFC3339))
	if d.Acceptance != nil {
		fmt.Fprintf(&sb, "acceptance %s — %s, %s [%s]\n", atomLine(d.Acceptance.Atom, d.Acceptance.NodeID), d.Acceptance.Kind, d.Acceptance.Tier, d.Acceptance.NodeID)
	} else {
		sb.WriteString("acceptance: not derived; nothing certifies the root yet\n")
	}
	if r := d.Receipt; r != nil {
		fmt.Fprintf(&sb, "receipt: %s by %s at %s, certified %v", r.Disposition, r.ClosedBy, r.At.Format(time.RFC3339), r.Certified)
		if r.ExplanationDigest != "" {
			fmt.Fprintf(&sb, ", explanation %s", r.ExplanationDigest)
		}
		if r.Exploratory {
			sb.WriteString(", exploratory")
		}
		sb.WriteString("\n")
	}
	if len(d.Facts) == 0 {
		sb.WriteString("facts: none yet\n")
	} else {
		sb.WriteString("facts:\n")
		for _, f := range d.Facts {
			sb.WriteString("  " + whyLine(f) + "\n")
		}
	}
	if err := writeCaseOperations(ctx, &sb, cl, c.Project, cs.CaseID); err != nil {
		return err
	}
	if _, err := io.WriteString(e.Stdout, sb.String()); err != nil {
		return err
	}
	if c.Why {
		if d.Why == nil {
			_, err := fmt.Fprintln(e.Stdout, "why: the Case has no acceptance to explain yet")
			return err
		}
		if _, err := fmt.Fprintln(e.Stdout, "why:"); err != nil {
			return err
		}
		return writeWhy(e.Stdout, *d.Why)
	}
	return nil
}
