package console

// This test is in package console, not console_test, because the decoder it fuzzes is
// unexported; going through HTTP would fuzz the transport instead of the decoder.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// FuzzDecodeStrict feeds arbitrary bodies to the strict decoder for every request type
// the API decodes. It must never panic, must refuse with a coded error, and what it
// accepts must survive a round trip through encoding/json unchanged.
func FuzzDecodeStrict(f *testing.F) {
	seeds, err := filepath.Glob("testdata/decode/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range seeds {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDecode[contract.LoginRequest](t, body)
		checkDecode[contract.CreateAgentRequest](t, body)
		checkDecode[contract.CreateConnectionRequest](t, body)
		checkDecode[contract.CreateProjectRequest](t, body)
		checkDecode[contract.Source](t, body)
		checkDecode[contract.ToolLock](t, body)
		checkDecode[contract.CapabilityUpload](t, body)
		checkDecode[contract.CreateScheduleRequest](t, body)
		checkDecode[contract.BudgetSpec](t, body)
		checkDecode[contract.BudgetReserve](t, body)
		checkDecode[contract.BudgetCharge](t, body)
		checkDecode[contract.ProfileSpec](t, body)
		checkDecode[contract.BlueprintSpec](t, body)
		checkDecode[contract.FromBlueprint](t, body)
	})
}

func checkDecode[T any](t *testing.T, body []byte) {
	var v T
	err := decodeStrict(bytes.NewReader(body), &v)
	if err != nil {
		if contract.CodeOf(err) == "" {
			t.Fatalf("decode %T from %q: error without a code: %v", v, body, err)
		}
		return
	}
	enc, err := json.Marshal(v)
	if err != nil {
		// A value can decode yet not encode (a Source without a tier); the authority's
		// validation refuses it, so there is nothing to round-trip.
		return
	}
	var w T
	if err := decodeStrict(bytes.NewReader(enc), &w); err != nil {
		t.Fatalf("decode %T from its own encoding %s: %v", v, enc, err)
	}
	enc2, _ := json.Marshal(w)
	if !bytes.Equal(enc, enc2) {
		t.Fatalf("round trip of %T changed %s into %s", v, enc, enc2)
	}
}
