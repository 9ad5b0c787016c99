package workhop

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestPollMemo_DecodesOnce checks that a Poll body sent again is decoded once and then
// taken from the memo as the decode gives it, with top-level slices of its own; that
// other bodies, refusals and other kinds are decoded each time; and that the memo stays
// bounded.
func TestPollMemo_DecodesOnce(t *testing.T) {
	t.Parallel()
	m := newPollMemo()
	calls := 0
	m.decode = func(b []byte, v *contract.WorkBody) error { calls++; return contract.DecodeStrict(b, v) }
	tool := `{"tool":"docket.workspace.read_json@1","digest":"sha256:aa","adapter":"workspace","adapterDigest":"sha256:bb","kind":"read","sourceTypes":[],` +
		`"direct":true,"description":"reads a JSON file","params":[{"name":"path","type":"string","required":true}],"returns":["path","size"]}`
	poll := func(max int) string {
		return fmt.Sprintf(`{"operation":{"kind":"Poll","workerId":"wkr-1","workerGeneration":3,"tools":[%s,%s],"max":%d,"vaultSources":["calc"]}}`,
			tool, strings.Replace(tool, "read_json", "write_json", 1), max)
	}
	claim := `{"operation":{"kind":"Claim","id":"w-1","workerId":"wkr-1","workerGeneration":3,"grant":"a.b"}}`
	for _, step := range []struct {
		name, body string
		calls      int
		refused    bool
	}{
		{"first poll", poll(8), 1, false},
		{"sent again", poll(8), 1, false},
		{"another number of slots", poll(3), 2, false},
		{"the first again", poll(8), 2, false},
		{"a claim", claim, 3, false},
		{"the claim again", claim, 4, false},
		{"a refused poll", strings.Replace(poll(8), `"max"`, `"max":1,"max"`, 1), 5, true},
		{"refused again", strings.Replace(poll(8), `"max"`, `"max":1,"max"`, 1), 6, true},
	} {
		var got, want contract.WorkBody
		err := m.decodeBody([]byte(step.body), &got)
		wantErr := contract.DecodeStrict([]byte(step.body), &want)
		if (err != nil) != step.refused || (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("%s: decodeBody = %v, DecodeStrict = %v, want refused %v", step.name, err, wantErr, step.refused)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: decodeBody = %+v, want %+v", step.name, got, want)
		}
		if calls != step.calls {
			t.Fatalf("%s: decoded %d times in all, want %d", step.name, calls, step.calls)
		}
		if err == nil && got.Operation.Poll != nil {
			// What the Dispatcher keeps of one request is not what the next is given.
			got.Operation.Poll.Tools[0].Tool = "changed@1"
			got.Operation.Poll.VaultSources[0] = "changed"
			*got.Operation.Poll.Generation = 99
		}
	}

	for i := range 3 * maxMemoPolls {
		var in contract.WorkBody
		if err := m.decodeBody([]byte(poll(100+i)), &in); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.byBody.Len(); n > maxMemoPolls {
		t.Fatalf("the memo holds %d bodies, want at most %d", n, maxMemoPolls)
	}
}
