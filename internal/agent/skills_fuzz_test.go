package agent

import (
	"testing"
)

// FuzzParseSkill: any SKILL.md either is refused or names a skill the model can be told:
// a valid name and a bounded description.
func FuzzParseSkill(f *testing.F) {
	f.Add([]byte("---\nname: deploy\ndescription: How to ship.\n---\nbody\n"))
	f.Add([]byte("---\nname: review\nallowed-tools: Read\n  nested: x\ndescription: \"quoted\"\n---\n"))
	f.Add([]byte("---\nname: a\nname: b\n---\n"))
	f.Add([]byte("no front matter"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseSkill("SKILL.md", b)
		if err != nil {
			return
		}
		if !skillName().MatchString(s.Name) || s.Description == "" || len(s.Description) > maxSkillDesc {
			t.Fatalf("parseSkill accepted %+v", s)
		}
	})
}
