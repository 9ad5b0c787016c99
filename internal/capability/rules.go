package capability

import (
	"strings"

	"github.com/docketrun/docket/internal/board/engine"
)

// checkRule compiles r alone on a fresh engine, so that an unsafe rule or a misused
// built-in is reported at its own position rather than once for the whole program.
func checkRule(r engine.Rule) error {
	_, err := engine.New(engine.Limits{}).AddRules(r)
	return err
}

// checkProgram adds every rule that compiled alone to one fresh engine, which refuses a
// program that is not stratified (negation or aggregation through recursion).
func (v *validation) checkProgram() {
	if len(v.rules) == 0 {
		return
	}
	if _, err := engine.New(engine.Limits{}).AddRules(v.rules...); err != nil {
		// Place the problem at the first rule the engine names, if it names one.
		where := "rules"
		for _, r := range v.rules {
			if strings.Contains(err.Error(), r.ID+" ") {
				where = v.ruleAt[r.ID]
				break
			}
		}
		v.addErr(where, err)
	}
}
