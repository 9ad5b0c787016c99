package main

import (
	"context"
	"fmt"
	"reflect"

	"github.com/docketrun/docket/internal/contract"
)

// fromBlueprint sets the Agent's profile to a copy of the blueprint c names: it reads the
// blueprint, checks its model with the Agent's key file (unless --no-check), and has the
// authority copy the blueprint at the digest it read, so what was checked is what is set.
func (c *agentProfileSetCmd) fromBlueprint(ctx context.Context, e *env, keyFile string) error {
	if !reflect.DeepEqual(c.modelFlags, modelFlags{Thinking: "default"}) {
		return &usageError{err: fmt.Errorf("--blueprint %s gives the model, instructions and allow-list; drop the other model flags, or set the blueprint again (docket agent blueprint set)", c.Blueprint)}
	}
	cl, err := newClient(e)
	if err != nil {
		return err
	}
	bp, err := cl.api.Blueprint(ctx, c.Project, c.Blueprint)
	if err != nil {
		return err
	}
	if !c.NoCheck {
		spec := bp.Profile
		spec.KeyFile = keyFile
		if err := checkModel(ctx, spec); err != nil {
			return err
		}
	}
	p, err := cl.api.SetProfileFromBlueprint(ctx, c.Project, c.Name, contract.FromBlueprint{Blueprint: bp.Name, Digest: &bp.Digest, KeyFile: keyFile, Enabled: !c.Disabled})
	if err != nil {
		return err
	}
	return printProfile(e, c.clientFlags, p)
}
