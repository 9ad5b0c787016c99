package worker

import (
	"context"
	"log/slog"
	"os"
	"time"
)

// DefaultVaultPoll is how often [Executor.WatchVault] looks at the vault file.
const DefaultVaultPoll = 2 * time.Second

// WatchVault reloads the vault at path into e each time hup delivers (the worker passes
// SIGHUP) and each time the file changes (another file, size or modification time, looked
// at every poll; default DefaultVaultPoll), until ctx ends. A vault that does not load is
// logged and the one in use is kept, so a half-written file never empties the worker; the
// next change or signal tries again. A reload changes what later rows select: a row being
// run keeps its Source.
func (e *Executor) WatchVault(ctx context.Context, path string, hup <-chan os.Signal, poll time.Duration) {
	if poll <= 0 {
		poll = DefaultVaultPoll
	}
	var last os.FileInfo
	t := time.NewTicker(poll)
	defer t.Stop()
	// The first pass loads the file as it is once watched: a change made since the vault
	// in use was read is not missed.
	for why := "start"; ; why = "changed" {
		if why != "start" {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				why = "signal"
			case <-t.C:
				now, err := os.Stat(path)
				if err != nil || last != nil && os.SameFile(last, now) && now.Size() == last.Size() && now.ModTime().Equal(last.ModTime()) {
					continue // unreadable now, or unchanged: keep the vault in use
				}
			}
		}
		now, err := os.Stat(path)
		if err != nil {
			e.cfg.Logger.WarnContext(ctx, "vault not reloaded; the one in use is kept", logReason, why, logErr, err)
			continue
		}
		last = now
		v, err := LoadVault(path)
		if err != nil {
			e.cfg.Logger.WarnContext(ctx, "vault not reloaded; the one in use is kept", logReason, why, logErr, err)
			continue
		}
		e.SetVault(v)
		level := slog.LevelInfo
		if why == "start" {
			level = slog.LevelDebug
		}
		e.cfg.Logger.Log(ctx, level, "vault reloaded", logReason, why, slog.Int(logSources, len(v.sources)))
	}
}
