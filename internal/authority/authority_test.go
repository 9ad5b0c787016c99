package authority_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/authority/authoritytest"
	"github.com/docketrun/docket/internal/authority/identity"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/store"
	"github.com/docketrun/docket/internal/store/sqlite"
)

const testPassphrase = "correct horse battery"

// fixture is an authority on a fresh SQLite store, initialized with member "ada" in
// project "default".
type fixture struct {
	a     *authority.Authority
	st    store.Store
	key   identity.Key
	admin identity.Caller
	token identity.Token
	log   *bytes.Buffer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newFixtureOn(t, st)
}

func newFixtureOn(t *testing.T, st store.Store) *fixture {
	t.Helper()
	f := &fixture{st: st, log: &bytes.Buffer{}}
	f.key = identity.Key{1, 2, 3, 4, 5, 6, 7, 8}
	p := authoritytest.New(t, authoritytest.Options{Store: st, Key: f.key,
		Logger: slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	f.a, f.token, f.admin = p.A, p.Token, p.Admin
	return f
}

// wantCode fails unless err carries code.
func wantCode(t *testing.T, err error, code contract.Code) {
	t.Helper()
	if got := contract.CodeOf(err); got != code {
		t.Fatalf("error = %v, want code %q", err, code)
	}
}

func TestAuthority_Init(t *testing.T) {
	f := newFixture(t)
	if f.admin.Kind != contract.PrincipalMember || f.admin.Name != "ada" {
		t.Errorf("init caller = %+v, want member ada", f.admin)
	}
	if !strings.HasPrefix(f.token.String(), contract.PrefixSession) {
		t.Errorf("init token %q lacks prefix %q", f.token, contract.PrefixSession)
	}
	_, err := f.a.Directory().Init(t.Context(), "bob", testPassphrase, "other")
	wantCode(t, err, contract.CodeAlreadyExists)

	es, err := f.a.Events(t.Context(), f.admin, "default", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range es {
		types = append(types, e.Type)
	}
	if got, want := strings.Join(types, ","), "project.created,member.created"; got != want {
		t.Errorf("events = %s, want %s", got, want)
	}
}

func TestAuthority_InitRefusesInput(t *testing.T) {
	tests := []struct {
		name, member, pass string
		project            contract.ProjectID
	}{
		{"short passphrase", "ada", "short", "default"},
		{"bad member name", "Ada Lovelace", testPassphrase, "default"},
		{"bad project", "ada", testPassphrase, "No Spaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			a := authoritytest.Bare(t, authoritytest.Options{Store: st, Key: identity.Key{1}})
			_, err = a.Directory().Init(t.Context(), tt.member, tt.pass, tt.project)
			wantCode(t, err, contract.CodeInvalidArgument)
			if ps, _ := st.Projects(t.Context()); len(ps) != 0 {
				t.Errorf("refused init left projects %v", ps)
			}
		})
	}
}

func TestAuthority_Login(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, member, pass string
		code               contract.Code
	}{
		{"right", "ada", testPassphrase, ""},
		{"wrong passphrase", "ada", "wrong horse battery", contract.CodeUnauthenticated},
		{"unknown member", "zed", testPassphrase, contract.CodeUnauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := f.a.Directory().Login(t.Context(), tt.member, tt.pass, 0)
			wantCode(t, err, tt.code)
			if err != nil {
				return
			}
			c, err := f.a.Directory().Authenticate(t.Context(), s.Token)
			if err != nil || c.ID != f.admin.ID {
				t.Fatalf("Authenticate(login token) = %+v, %v; want %s", c, err, f.admin.ID)
			}
			if err := f.a.Directory().Logout(t.Context(), s.Token); err != nil {
				t.Fatal(err)
			}
			_, err = f.a.Directory().Authenticate(t.Context(), s.Token)
			wantCode(t, err, contract.CodeCredentialRevoked)
		})
	}
}

func TestAuthority_SessionExpires(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := authoritytest.New(t, authoritytest.Options{Store: st, Key: identity.Key{9}, Now: func() time.Time { return now }}).A
	s, err := a.Directory().Login(t.Context(), "ada", testPassphrase, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	_, err = a.Directory().Authenticate(t.Context(), s.Token)
	wantCode(t, err, contract.CodeSessionExpired)
}

func TestAuthority_Authenticate(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	ag, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	old, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "rotated", Kind: "orchestrator"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Directory().RotateAgentToken(ctx, f.admin, "default", "rotated"); err != nil {
		t.Fatal(err)
	}
	gone, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Directory().RevokeAgent(ctx, f.admin, "default", "gone"); err != nil {
		t.Fatal(err)
	}
	cn, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	unknown := contract.PrefixSession + strings.Repeat("A", 43)
	tests := []struct {
		name  string
		token string
		code  contract.Code
		kind  contract.PrincipalKind
	}{
		{"member session", f.token.String(), "", contract.PrincipalMember},
		{"agent", ag.Token, "", contract.PrincipalAgent},
		{"empty", "", contract.CodeUnauthenticated, ""},
		{"no prefix", "abc", contract.CodeUnauthenticated, ""},
		{"short secret", contract.PrefixAgent + "abc", contract.CodeUnauthenticated, ""},
		{"unknown session", unknown, contract.CodeUnauthenticated, ""},
		{"replaced agent token", old.Token, contract.CodeUnauthenticated, ""},
		{"revoked agent", gone.Token, contract.CodeCredentialRevoked, ""},
		{"connection key", cn.Key, contract.CodeUnauthenticated, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := f.a.Directory().Authenticate(ctx, identity.Token(tt.token))
			wantCode(t, err, tt.code)
			if c.Kind != tt.kind {
				t.Errorf("kind = %q, want %q", c.Kind, tt.kind)
			}
		})
	}
}

func TestAuthority_Connection(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	ck, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.a.Directory().AuthenticateConnection(ctx, identity.Token(ck.Key))
	if err != nil || c.ID != ck.Connection.ID {
		t.Fatalf("AuthenticateConnection = %+v, %v; want %s", c, err, ck.Connection.ID)
	}
	// At rest the key is sealed: the row must not contain it, and signing gets it back.
	row, err := f.st.Connection(ctx, string(ck.Connection.ID))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(row.KeyCiphertext, []byte(ck.Key)) || bytes.Contains(row.KeyCiphertext, []byte(strings.SplitN(ck.Key, ".", 2)[1])) {
		t.Error("the stored connection row holds the key in clear")
	}
	if got, err := f.a.Directory().ConnectionKey(ctx, ck.Connection.ID); err != nil || got.String() != ck.Key {
		t.Errorf("ConnectionKey = %v; want the created key", err)
	}
	// A key with another connection's id, or altered, proves nothing.
	forged := strings.Replace(ck.Key, ".", ".x", 1)[:len(ck.Key)]
	_, err = f.a.Directory().AuthenticateConnection(ctx, identity.Token(forged))
	wantCode(t, err, contract.CodeUnauthenticated)

	if _, err := f.a.Directory().RevokeConnection(ctx, f.admin, "default", "laptop"); err != nil {
		t.Fatal(err)
	}
	_, err = f.a.Directory().AuthenticateConnection(ctx, identity.Token(ck.Key))
	wantCode(t, err, contract.CodeCredentialRevoked)

	// Another installation key cannot open the stored key.
	other := authoritytest.Bare(t, authoritytest.Options{Store: f.st, Key: identity.Key{42}})
	if _, err := other.Directory().ConnectionKey(ctx, ck.Connection.ID); err == nil {
		t.Error("ConnectionKey under another installation key succeeded")
	}
}

func TestAuthority_SecretsStayOutOfLogsAndEvents(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	ag, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	ck, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	es, err := f.a.Events(ctx, f.admin, "default", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var events bytes.Buffer
	for _, e := range es {
		events.Write(e.Data)
	}
	for name, secret := range map[string]string{"session": f.token.String(), "agent": ag.Token, "connection": ck.Key} {
		if strings.Contains(f.log.String(), secret) {
			t.Errorf("the log holds the %s token", name)
		}
		if strings.Contains(events.String(), secret) {
			t.Errorf("the events hold the %s token", name)
		}
	}
	if !strings.Contains(f.log.String(), "token.sha256=") {
		t.Errorf("the log should name tokens by digest prefix; got:\n%s", f.log)
	}
}

func TestAuthority_AgentsOnlyForMembers(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	ag, err := f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := f.a.Directory().Authenticate(ctx, identity.Token(ag.Token))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		caller  identity.Caller
		project contract.ProjectID
		code    contract.Code
	}{
		{"member of project", f.admin, "default", ""},
		{"agent", agent, "default", contract.CodeForbidden},
		{"member of another project", f.admin, "elsewhere", contract.CodeForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.a.Directory().Agents(ctx, tt.caller, tt.project)
			wantCode(t, err, tt.code)
		})
	}
	_, err = f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "calc"})
	wantCode(t, err, contract.CodeAlreadyExists)
	_, err = f.a.Directory().CreateAgent(ctx, f.admin, "default", contract.CreateAgentRequest{Name: "x", Kind: "boss"})
	wantCode(t, err, contract.CodeInvalidArgument)
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	k := identity.Key{7, 7, 7}
	if err := identity.WriteKeyFile(path, k); err != nil {
		t.Fatal(err)
	}
	if err := identity.WriteKeyFile(path, identity.Key{8}); err == nil {
		t.Error("WriteKeyFile replaced an existing key")
	}
	got, err := identity.ReadKeyFile(path)
	if err != nil || got != k {
		t.Fatalf("ReadKeyFile = %v, %v; want the written key", got, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := identity.ReadKeyFile(path); err == nil {
		t.Error("ReadKeyFile accepted a key file others may read")
	}
}

func TestToken_LogValue(t *testing.T) {
	tok := identity.Token(contract.PrefixAgent + strings.Repeat("Q", 43))
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("m", "token", tok, "key", identity.Key{1})
	if strings.Contains(buf.String(), "QQQQ") {
		t.Errorf("log holds the token: %s", buf.String())
	}
	if !strings.Contains(buf.String(), `"kind":"dkt_agt_"`) {
		t.Errorf("log lacks the token kind: %s", buf.String())
	}
}

func newAuthorityOn(t *testing.T, st store.Store, key identity.Key) *authority.Authority {
	t.Helper()
	a := authoritytest.Bare(t, authoritytest.Options{Store: st, Key: key})
	return a
}
