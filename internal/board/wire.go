package board

import (
	"github.com/docketrun/docket/internal/board/engine"
	"github.com/docketrun/docket/internal/contract"
)

// WireAtom returns a's wire form, for edges that print engine facts (docket rules eval).
func WireAtom(a engine.Atom) contract.Atom { return wireAtom(a) }
