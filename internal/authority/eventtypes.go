package authority

import "github.com/docketrun/docket/internal/authority/event"

// EventTypes lists every event type the authority appends, grouped by what appends
// them: a reader that follows the whole log, such as the console's live tail, listens
// for these.
func EventTypes() []string {
	out := make([]string, len(event.Catalog))
	for i, k := range event.Catalog {
		out[i] = k.Type
	}
	return out
}
