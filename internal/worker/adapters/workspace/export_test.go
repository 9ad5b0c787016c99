package workspace

// WithBeforeRename returns an Adapter that calls f just before a write's rename, so a
// test can swap a symbolic link in at the worst moment.
func WithBeforeRename(f func()) Adapter { return Adapter{beforeRename: f} }
