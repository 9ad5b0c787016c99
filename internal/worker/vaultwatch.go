package worker

import (
	"context"
	"log/slog"
	"os"
	"time"
)

// DefaultVaultPoll is how often [Executor.WatchVault] and [Executor.WatchManifest] look
// at their file.
const DefaultVaultPoll = 2 * time.Second

// WatchVault reloads the vault at path into e each time hup delivers (the worker passes
// SIGHUP) and each time the file changes (another file, size or modification time, looked
// at every poll; default DefaultVaultPoll), until ctx ends. A vault that does not load is
// logged and the one in use is kept, so a half-written file never empties the worker; the
// next change or signal tries again. A reload changes what later rows select: a row being
// run keeps its Source.
func (e *Executor) WatchVault(ctx context.Context, path string, hup <-chan os.Signal, poll time.Duration) {
	e.watch(ctx, "vault", path, hup, poll, func() (slog.Attr, error) {
		v, err := LoadVault(path)
		if err != nil {
			return slog.Attr{}, err
		}
		e.SetVault(v)
		return slog.Int(logSources, len(v.sources)), nil
	})
}

// watch calls load once at the start and again on each signal from hup and each change of
// the file at path, logging what it did; a load that fails is logged as keeping the file
// in use.
func (e *Executor) watch(ctx context.Context, what, path string, hup <-chan os.Signal, poll time.Duration, load func() (slog.Attr, error)) {
	if poll <= 0 {
		poll = DefaultVaultPoll
	}
	var last os.FileInfo
	t := time.NewTicker(poll)
	defer t.Stop()
	// The first pass loads the file as it is once watched: a change made since the one in
	// use was read is not missed.
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
					continue // unreadable now, or unchanged: keep the one in use
				}
			}
		}
		now, err := os.Stat(path)
		if err != nil {
			e.cfg.Logger.WarnContext(ctx, what+" not reloaded; the one in use is kept", logReason, why, logErr, err)
			continue
		}
		last = now
		attr, err := load()
		if err != nil {
			e.cfg.Logger.WarnContext(ctx, what+" not reloaded; the one in use is kept", logReason, why, logErr, err)
			continue
		}
		level := slog.LevelInfo
		if why == "start" {
			level = slog.LevelDebug
		}
		e.cfg.Logger.Log(ctx, level, what+" reloaded", logReason, why, attr)
	}
}
