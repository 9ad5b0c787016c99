package main

import (
	"strings"

	"github.com/docketrun/docket/internal/authority/opclass"
)

// operationCmd reads the one table of operation classes.
type operationCmd struct {
	List operationListCmd `cmd:"" help:"List every changing operation with its class: operational (a delegate runs it), consent (a card its member confirms), member-only."`
}

type operationListCmd struct {
	Output string `short:"o" help:"Output format: text or json." enum:"text,json" default:"text"`
}

func (c *operationListCmd) Run(e *env) error {
	ops := opclass.Table
	if c.Output == "json" {
		return printJSON(e.Stdout, ops)
	}
	rows := make([][]string, 0, len(ops))
	for _, op := range ops {
		bound := ""
		if sub, ok := opclass.Subjects[op.Name]; ok {
			bound = sub.Kind + " " + strings.Join(sub.Refs, " ")
		}
		rows = append(rows, []string{op.Name, string(op.Class), op.Route, op.Changes, bound})
	}
	return writeList(e, []string{"operation", "class", "route", "changes", "a card is bound to"}, rows, "no operations")
}
