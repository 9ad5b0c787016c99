package authority_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
)

func TestAuthority_BindSource(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	ck, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "old"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Directory().RevokeConnection(ctx, f.admin, "default", "old"); err != nil {
		t.Fatal(err)
	}
	good := contract.Source{Name: "workspace", Type: "file", Words: []string{"output_file", "calculation_input", "output_file"}, Tier: contract.TierAttested}
	tests := []struct {
		name string
		conn string
		src  contract.Source
		code contract.Code
	}{
		{"good", "laptop", good, ""},
		{"by connection id", string(ck.Connection.ID), good, ""},
		{"unknown type", "laptop", contract.Source{Name: "w", Type: "ftp", Words: []string{"a"}, Tier: contract.TierAttested}, contract.CodeInvalidArgument},
		{"no words: it attests nothing", "laptop", contract.Source{Name: "receipts", Type: "http", Tier: contract.TierAttested}, ""},
		{"word not a predicate", "laptop", contract.Source{Name: "w", Type: "file", Words: []string{"Bad-Word"}, Tier: contract.TierAttested}, contract.CodeInvalidArgument},
		{"no tier", "laptop", contract.Source{Name: "w", Type: "file", Words: []string{"a"}}, contract.CodeInvalidArgument},
		{"unknown connection", "nope", good, contract.CodeNotFound},
		{"revoked connection", "old", good, contract.CodeCredentialRevoked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.a.Directory().BindSource(ctx, f.admin, "default", tt.conn, tt.src)
			wantCode(t, err, tt.code)
		})
	}
	got, err := f.a.Directory().Sources(ctx, f.admin, "default", "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("Sources = %+v, want receipts and workspace", got)
	}
	want := []contract.Source{
		{Connection: ck.Connection.ID, Name: "receipts", Type: "http", Tier: contract.TierAttested, Digest: got[0].Digest},
		{Connection: ck.Connection.ID, Name: "workspace", Type: "file",
			Words: []string{"calculation_input", "output_file"}, Tier: contract.TierAttested, Digest: got[1].Digest}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sources (-want +got):\n%s", diff)
	}
}

func TestAuthority_LockTool(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.a.Directory().CreateConnection(ctx, f.admin, "default", contract.CreateConnectionRequest{Name: "laptop"}); err != nil {
		t.Fatal(err)
	}
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		name, tool, digest string
		code               contract.Code
	}{
		{"good", "docket.workspace.read_json@1", digest, ""},
		{"relock replaces", "docket.workspace.read_json@1", "sha256:ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", ""},
		{"no version", "docket.workspace.read_json", digest, contract.CodeInvalidArgument},
		{"version zero", "docket.workspace.read_json@0", digest, contract.CodeInvalidArgument},
		{"one segment", "readjson@1", digest, contract.CodeInvalidArgument},
		{"upper-case digest", "a.b@1", "sha256:" + "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", contract.CodeInvalidArgument},
		{"short digest", "a.b@1", "sha256:00", contract.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.a.LockTool(ctx, f.admin, "default", "laptop", contract.ToolLock{Tool: tt.tool, Digest: tt.digest})
			wantCode(t, err, tt.code)
		})
	}
	got, err := f.a.Directory().ToolLocks(ctx, f.admin, "default", "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Digest != "sha256:ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff" {
		t.Errorf("ToolLocks = %+v, want the one relocked tool", got)
	}
}
