package contract_test

import (
	"testing"

	"github.com/docketrun/docket/internal/contract"
)

// TestProfileSpec_SameRuntime: two reads of one profile run the same runtime, its
// allow-list held by a new pointer on each read or changed; any field the runtime reads
// makes another runtime.
func TestProfileSpec_SameRuntime(t *testing.T) {
	base := func() contract.ProfileSpec {
		return contract.ProfileSpec{Provider: "openai", Model: "m", Enabled: true, Allow: &contract.AllowList{Actions: []string{"a"}}}
	}
	tests := []struct {
		name string
		edit func(*contract.ProfileSpec)
		want bool
	}{
		{"read again", func(*contract.ProfileSpec) {}, true},
		{"another allow-list", func(p *contract.ProfileSpec) { p.Allow = &contract.AllowList{CaseTypes: []string{"x"}} }, true},
		{"no allow-list", func(p *contract.ProfileSpec) { p.Allow = nil }, true},
		{"another model", func(p *contract.ProfileSpec) { p.Model = "n" }, false},
		{"disabled", func(p *contract.ProfileSpec) { p.Enabled = false }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := base()
			tt.edit(&q)
			if got := base().SameRuntime(q); got != tt.want {
				t.Errorf("SameRuntime = %v, want %v", got, tt.want)
			}
		})
	}
}
