package dispatch

import "time"

// LeaseTTL is how long a lease lasts from its grant or its last renewal: a lease that
// expires at E was last renewed at E - LeaseTTL.
func (d *Dispatcher) LeaseTTL() time.Duration { return d.leaseTTL }
