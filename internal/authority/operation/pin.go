package operation

import (
	"fmt"

	"github.com/docketrun/docket/internal/board"
	"github.com/docketrun/docket/internal/contract"
)

// pinRefusal refuses a write that would move a pinned conversation's work onto another
// contract: opening a Case of another Case Type or business key, or acting in, writing
// to or closing a Case that is not of the pinned type and key. A Case-free Action moves
// no work and passes. It is checked at admission, on the Board the call would run on, so
// the pin holds whatever the model's prompt says.
func pinRefusal(b *board.Board, pin contract.CasePin, input any) *contract.Error {
	if pin.CaseType == "" {
		return nil
	}
	want := fmt.Sprintf("Case Type %q with business key %s", pin.CaseType, pin.BusinessKey.JSON())
	refuse := func(what string) *contract.Error {
		return contract.Errorf(contract.CodeCasePinned, "this conversation's task pins its work to %s; %s is another contract and was not run. Work on the pinned Case (OpenCase with exactly that type and key), or ask the person to post a new task for other work", want, what)
	}
	inCase := func(id contract.CaseID) *contract.Error {
		if id == "" {
			return nil
		}
		cs, ok := b.Case(id)
		if !ok {
			return nil // the Board refuses an unknown Case itself
		}
		if cs.CaseType != pin.CaseType || cs.BusinessKey.JSON() != pin.BusinessKey.JSON() {
			return refuse(fmt.Sprintf("Case %s (Case Type %q, business key %s)", id, cs.CaseType, cs.BusinessKey.JSON()))
		}
		return nil
	}
	switch in := input.(type) {
	case *contract.OpenCaseInput:
		if in.CaseType != pin.CaseType || in.BusinessKey.JSON() != pin.BusinessKey.JSON() {
			return refuse(fmt.Sprintf("opening Case Type %q with business key %s", in.CaseType, in.BusinessKey.JSON()))
		}
	case *contract.ApplyActionInput:
		return inCase(in.CaseID)
	case *contract.CloseCaseInput:
		return inCase(in.CaseID)
	case *contract.Batch:
		for _, op := range in.Operations {
			if err := inCase(op.CaseID); err != nil {
				return err
			}
		}
	}
	return nil
}
