package authority_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket/internal/contract"
)

// TestMemberNames: the console's pages name who acted by the member's name, and only to
// someone who shares the project with that member: a member of another project, an id
// of no member and a delegate's actor are left out, and a caller outside the project is
// refused.
func TestMemberNames(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	bob, err := f.a.Directory().CreateMember(ctx, f.admin, contract.CreateMemberRequest{Name: "bob", Passphrase: testPassphrase})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Directory().CreateProject(ctx, f.admin, contract.CreateProjectRequest{ID: "more"}); err != nil {
		t.Fatal(err)
	}
	ada, err := f.a.Directory().Authenticate(ctx, f.token)
	if err != nil {
		t.Fatal(err)
	}
	ids := []contract.MemberID{contract.MemberID(ada.ID), bob.ID, "mem_0000000000000000", "ada/asst", contract.MemberID(ada.ID)}
	tests := []struct {
		project contract.ProjectID
		want    map[contract.MemberID]string
	}{
		{"default", map[contract.MemberID]string{contract.MemberID(ada.ID): "ada", bob.ID: "bob"}},
		{"more", map[contract.MemberID]string{contract.MemberID(ada.ID): "ada"}}, // bob is no member of it
	}
	for _, tt := range tests {
		got, err := f.a.Directory().MemberNames(ctx, ada, tt.project, ids)
		if err != nil {
			t.Fatalf("MemberNames(%s): %v", tt.project, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("MemberNames(%s) (-want +got):\n%s", tt.project, diff)
		}
	}
	_, err = f.a.Directory().MemberNames(ctx, f.admin, "more", ids) // the caller as it was, before "more"
	wantCode(t, err, contract.CodeForbidden)
}
