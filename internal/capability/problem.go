package capability

import (
	"fmt"
	"strings"

	"github.com/docketrun/docket/internal/contract"
)

// Problem is one thing wrong with a capability package.
type Problem struct {
	Where   string        // "capability.toml:12", "rules.dl:2:14", or a file name when no line is known
	Code    contract.Code // capability_invalid, rule_syntax, integer_range or rule_unsafe
	Message string        // what is wrong and how to fix it
}

// String formats p as "where: message".
func (p Problem) String() string {
	if p.Where == "" {
		return p.Message
	}
	return p.Where + ": " + p.Message
}

// Problems is every problem found in a package, in the order found. It is the cause inside the
// *contract.Error that [Load] returns, for callers that list problems one per line.
type Problems []Problem

// Error lists the problems, one per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// asError turns problems into the refusal Load returns: code rule_syntax when every
// problem is in rule text, capability_invalid otherwise, and a teaching that lists them all.
func (ps Problems) asError() error {
	if len(ps) == 0 {
		return nil
	}
	code := contract.CodeRuleSyntax
	for _, p := range ps {
		if p.Code != contract.CodeRuleSyntax && p.Code != contract.CodeIntegerRange {
			code = contract.CodeCapabilityInvalid
		}
	}
	teaching := ps.Error()
	if len(ps) > 1 {
		teaching = fmt.Sprintf("the capability has %d problems; fix each:\n%s", len(ps), teaching)
	}
	return &contract.Error{Code: code, Teaching: teaching, Err: ps}
}
