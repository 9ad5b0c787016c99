package eventlog

// WaitFollows waits until no follow goroutine of d's Log runs ([Driver.Follow]), without
// closing d: it returns once the last stop of each project ended its goroutine.
func WaitFollows[S State](d *Driver[S]) { d.log.follows.Wait() }
