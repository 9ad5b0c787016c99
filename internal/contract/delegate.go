package contract

import (
	"fmt"
	"time"
)

// Delegate lives: a delegate acts for its member for at least a minute and at
// most thirty days.
const (
	MinDelegateLife = time.Minute
	MaxDelegateLife = 30 * 24 * time.Hour
)

// CreateDelegateRequest is the body of POST /api/v1/projects/{project}/delegates. Life is
// a Go duration ("8h", "90m"); Name is optional and defaults to the delegate's id.
type CreateDelegateRequest struct {
	Name string `json:"name,omitempty"`
	Life string `json:"life"`
}

// ParseDelegateLife checks s as a delegate's life.
func ParseDelegateLife(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("life %q is not a duration such as 8h or 90m", s)
	}
	if d < MinDelegateLife || d > MaxDelegateLife {
		return 0, fmt.Errorf("life %s is outside 1m to 720h (30 days)", d)
	}
	return d, nil
}

// Delegate is a member's credential for an assistant, as the API shows it: never its token.
type Delegate struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Member    MemberID   `json:"member"`
	Project   ProjectID  `json:"project"`
	Actor     Principal  `json:"actor"` // what its acts are recorded as: member:<name>/<delegate>
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// DelegateToken is a new delegate and its credential, shown this once.
type DelegateToken struct {
	Delegate Delegate `json:"delegate"`
	Token    string   `json:"token"`
}
