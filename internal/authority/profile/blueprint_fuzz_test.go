package profile_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/authority/profile"
	"github.com/docketrun/docket/internal/contract"
)

// FuzzValidateBlueprint feeds arbitrary blueprints, decoded from JSON as the console
// decodes a body, to the check made when a blueprint is set. It must never panic, must
// refuse with blueprint_invalid and a sentence, and what it admits must be admitted again
// after a round trip through its stored form, with the same digest.
func FuzzValidateBlueprint(f *testing.F) {
	seeds, err := filepath.Glob("testdata/blueprint/*.json")
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
		var in struct {
			Name string                 `json:"name"`
			Spec contract.BlueprintSpec `json:"spec"`
		}
		if json.Unmarshal(body, &in) != nil {
			return
		}
		err := profile.ValidateBlueprint(in.Name, in.Spec)
		if err != nil {
			ce, ok := errors.AsType[*contract.Error](err)
			if !ok || ce.Code != contract.CodeBlueprintInvalid || ce.Teaching == "" {
				t.Fatalf("ValidateBlueprint(%q) = %v, want blueprint_invalid with a sentence", body, err)
			}
			return
		}
		d1, err := profile.DigestOf(in.Spec)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := json.Marshal(in.Spec)
		if err != nil {
			t.Fatal(err)
		}
		var again contract.BlueprintSpec
		if err := json.Unmarshal(stored, &again); err != nil {
			t.Fatalf("the stored form %s does not decode: %v", stored, err)
		}
		if err := profile.ValidateBlueprint(in.Name, again); err != nil {
			t.Fatalf("admitted %q, refused after a round trip: %v", body, err)
		}
		if d2, err := profile.DigestOf(again); err != nil || d2 != d1 {
			t.Fatalf("digest %s, after a round trip %s (%v)", d1, d2, err)
		}
	})
}
