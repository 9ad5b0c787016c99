package policy

import (
	"time"

	"github.com/BurntSushi/toml"
)

// MaxRetentionDays bounds an [artifact_policy]'s retention_days: ten years.
const MaxRetentionDays = 3650

// Artifact is an [artifact_policy]: how long an artifact an Agent keeps in the project
// can be read (docs/mcp.md, "Artifacts").
type Artifact struct {
	// RetentionDays is the days an artifact can be read from when it is kept, 1 to
	// MaxRetentionDays; 0 (the key left out) is the server's retention.
	RetentionDays int64 `toml:"retention_days"`
}

// Retention is how long an artifact kept now can be read under a: its retention_days,
// else server, the server's own retention.
func (a *Artifact) Retention(server time.Duration) time.Duration {
	if a == nil || a.RetentionDays == 0 {
		return server
	}
	return time.Duration(a.RetentionDays) * 24 * time.Hour
}

func (a *Artifact) check(loc *locator, md toml.MetaData) error {
	if md.IsDefined("artifact_policy", "retention_days") && (a.RetentionDays < 1 || a.RetentionDays > MaxRetentionDays) {
		return loc.refuse(loc.keyLine(toml.Key{"artifact_policy", "retention_days"}),
			"retention_days is %d; use 1 to %d days, or leave the key out for the server's retention", a.RetentionDays, MaxRetentionDays)
	}
	return nil
}
