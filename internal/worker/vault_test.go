package worker_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

const dsnSecret = "postgres://app:hunter2-very-secret@db.internal/app"

func writeVault(t *testing.T, js string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vault.json")
	if err := os.WriteFile(p, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadVault(t *testing.T) {
	good := `{"sources":{"calc":{"type":"file","root":"/srv/calc"},"orders":{"type":"db","dsn":"` + dsnSecret + `","tier":"attested"}}}`
	tests := []struct {
		name string
		js   string
		mode os.FileMode
		code contract.Code
	}{
		{"ok", good, 0o600, ""},
		{"ok owner read only", good, 0o400, ""},
		{"group readable", good, 0o640, contract.CodeVaultPermissions},
		{"world readable", good, 0o604, contract.CodeVaultPermissions},
		{"unknown field", `{"sources":{"calc":{"type":"file","root":"/srv","password":"x"}}}`, 0o600, contract.CodeVaultInvalid},
		{"duplicate key", `{"sources":{"calc":{"type":"file","root":"/srv","root":"/"}}}`, 0o600, contract.CodeVaultInvalid},
		{"case-variant key", `{"sources":{"calc":{"type":"file","ROOT":"/"}}}`, 0o600, contract.CodeVaultInvalid},
		{"relative root", `{"sources":{"calc":{"type":"file","root":"srv"}}}`, 0o600, contract.CodeVaultInvalid},
		{"bad type", `{"sources":{"calc":{"type":"ftp"}}}`, 0o600, contract.CodeVaultInvalid},
		{"bad name", `{"sources":{"Calc":{"type":"file","root":"/srv"}}}`, 0o600, contract.CodeVaultInvalid},
		{"bad dsn", `{"sources":{"db":{"type":"db","dsn":"mysql://root:hunter2-very-secret@x/y"}}}`, 0o600, contract.CodeVaultInvalid},
		{"mcp both", `{"sources":{"m":{"type":"mcp","command":["x"],"url":"http://h/mcp"}}}`, 0o600, contract.CodeVaultInvalid},
		{"http bad url", `{"sources":{"h":{"type":"http","url":"ftp://u:hunter2-very-secret@h"}}}`, 0o600, contract.CodeVaultInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := worker.LoadVault(writeVault(t, tt.js, tt.mode))
			if got := contract.CodeOf(err); got != tt.code {
				t.Fatalf("LoadVault = %v, want code %q", err, tt.code)
			}
			if err != nil {
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("LoadVault error leaks a secret: %v", err)
				}
				return
			}
			if s, ok := v.Source("orders"); !ok || s.DSN.Reveal() != dsnSecret || s.Tier != contract.TierAttested {
				t.Errorf("Source(orders) = %+v, %v", s, ok)
			}
		})
	}
}

// TestSecret_redacted shows that a Source's secrets reach no log, format or JSON.
func TestSecret_redacted(t *testing.T) {
	v, err := worker.ParseVault([]byte(`{"sources":{"orders":{"type":"db","dsn":"` + dsnSecret + `"},
		"api":{"type":"http","url":"https://u:hunter2-very-secret@api.example","headers":{"Authorization":"Bearer hunter2-very-secret"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	for _, name := range v.Names() {
		s, _ := v.Source(name)
		log.Info("source", "source", s, "dsn", s.DSN, "url", s.URL)
		js, _ := json.Marshal(s)
		out := fmt.Sprintf("%v %+v %#v %s %s", s, *s, *s, js, logs.String())
		if strings.Contains(out, "hunter2") {
			t.Errorf("source %s leaks its secret: %s", name, out)
		}
	}
}
