package contract

// CaseDetail is one Case as GET …/cases/{case} returns it: the Case record's fields, and
// what a person checking it needs beside them — the receipt its close wrote, the
// acceptance node that certifies (or certified) its root with that node's derivation
// tree, and the facts that tree rests on, each with its tier and provenance.
type CaseDetail struct {
	Case
	Receipt *ClosureReceipt `json:"receipt,omitempty"`
	// Acceptance is the derived node that certifies the root now, or nil when nothing
	// does; Why is its derivation tree.
	Acceptance *Node `json:"acceptance,omitempty"`
	Why        *Why  `json:"why,omitempty"`
	// Facts are the base facts the acceptance rests on; before the Case is certified, the
	// facts naming its business key.
	Facts []WhyNode `json:"facts"`
}
