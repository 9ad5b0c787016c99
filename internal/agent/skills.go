package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/docketrun/docket/internal/contract"
)

// Standing instructions and skills from an Agent's workspace (docs/workbench.md,
// "Instructions and skills"): the AGENTS.md and CLAUDE.md files from the workspace's root
// down to the workspace, each labelled with its path, and the skills of its skill folders,
// listed to the model by name and description and read whole only when the model asks
// (ReadSkill), so that a skill costs no context until it is used.

// Bounds of what a workspace gives the model.
const (
	MaxInstructionFile = 64 << 10 // bytes of one AGENTS.md or CLAUDE.md
	MaxSkills          = 64       // skills listed
	MaxSkillFile       = 64 << 10 // bytes of one SKILL.md, or one file of a skill read
	maxSkillDesc       = 1024     // bytes of a skill's description
)

// instructionFiles are the names read in each directory, in this order.
var instructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// skillDirs are where a workspace keeps its skills, relative to the workspace.
var skillDirs = []string{".docket/skills", ".claude/skills"}

// Skill is one skill a workspace offers: a folder holding SKILL.md, whose front matter
// names it and says what it is for.
type Skill struct {
	Name        string
	Description string
	Dir         string // the skill's folder
}

// Workspace is what an Agent's workspace gives the model: its standing instructions and its
// skills.
type Workspace struct {
	Instructions string   // every instruction file from the root down, each under its path
	Files        []string // the instruction files read, root first
	Skills       []Skill  // sorted by name
}

// ReadWorkspace reads the instruction files of dir and of each directory above it up to
// its root — the nearest directory holding .git, else dir itself — and the skills under
// dir's skill folders. A file over its bound, a SKILL.md without a name and description,
// or two skills of one name is refused with the file and the fix.
func ReadWorkspace(dir string) (Workspace, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Workspace{}, fmt.Errorf("read the workspace %s: %w", dir, err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return Workspace{}, contract.Errorf(contract.CodeModelConfig, "the workspace %s is not a directory; name the directory the Agent works in", dir)
	}
	var w Workspace
	var parts []string
	for _, d := range fromRoot(dir) {
		for _, name := range instructionFiles {
			path := filepath.Join(d, name)
			b, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return Workspace{}, fmt.Errorf("read the instructions %s: %w", path, err)
			}
			if len(b) > MaxInstructionFile {
				return Workspace{}, contract.Errorf(contract.CodeModelConfig, "%s is %d bytes, over the %d an instruction file may hold; keep standing instructions short, and move long guides into skills", path, len(b), MaxInstructionFile)
			}
			if text := strings.TrimSpace(string(b)); text != "" {
				w.Files = append(w.Files, path)
				parts = append(parts, "From "+path+":\n"+text)
			}
		}
	}
	w.Instructions = strings.Join(parts, "\n\n")
	if w.Skills, err = readSkills(dir); err != nil {
		return Workspace{}, err
	}
	return w, nil
}

// fromRoot returns the directories from dir's root down to dir: the root is the nearest
// directory at or above dir holding .git, else dir alone.
func fromRoot(dir string) []string {
	chain := []string{dir}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			slices.Reverse(chain)
			return chain
		}
		up := filepath.Dir(d)
		if up == d {
			return []string{dir}
		}
		d = up
		chain = append(chain, d)
	}
}

var skillName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`) })

func readSkills(dir string) ([]Skill, error) {
	var out []Skill
	seen := map[string]string{}
	for _, sd := range skillDirs {
		root := filepath.Join(dir, sd)
		entries, err := os.ReadDir(root)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the skills of %s: %w", root, err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			path := filepath.Join(root, e.Name(), "SKILL.md")
			b, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read the skill %s: %w", path, err)
			}
			s, err := parseSkill(path, b)
			if err != nil {
				return nil, err
			}
			if first, dup := seen[s.Name]; dup {
				return nil, contract.Errorf(contract.CodeModelConfig, "%s and %s both name the skill %q; rename one", first, path, s.Name)
			}
			seen[s.Name] = path
			s.Dir = filepath.Dir(path)
			out = append(out, s)
		}
	}
	if len(out) > MaxSkills {
		return nil, contract.Errorf(contract.CodeModelConfig, "the workspace %s offers %d skills, over the %d listed to a model; keep the ones this Agent needs", dir, len(out), MaxSkills)
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// parseSkill reads the front matter of a SKILL.md: a first line "---", lines "key: value"
// up to the next "---", of which name and description are read (each once) and other keys
// (a coding agent's own) are left alone.
func parseSkill(path string, b []byte) (Skill, error) {
	refuse := func(line int, format string, args ...any) error {
		return contract.Errorf(contract.CodeModelConfig, "%s:%d: %s", path, line, fmt.Sprintf(format, args...))
	}
	if len(b) > MaxSkillFile {
		return Skill{}, refuse(1, "the file is %d bytes, over the %d a SKILL.md may hold; move detail into other files of the skill", len(b), MaxSkillFile)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), MaxSkillFile)
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != "---" {
		return Skill{}, refuse(1, "a SKILL.md starts with front matter: a line ---, then name: and description:, then ---")
	}
	var s Skill
	got := map[string]bool{}
	for line := 2; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "---" {
			switch {
			case !skillName().MatchString(s.Name):
				return Skill{}, refuse(line, "the skill's name %q is not lower-case letters, digits and -, at most 64; set name:", s.Name)
			case s.Description == "":
				return Skill{}, refuse(line, "the skill has no description:; say in one sentence when to use it, since that is all the model sees of it until it reads it")
			}
			return s, nil
		}
		key, value, ok := strings.Cut(text, ":")
		if !ok || strings.HasPrefix(text, " ") || strings.HasPrefix(text, "\t") {
			continue // a value continued, or a nested key of another tool's: not ours
		}
		key, value = strings.TrimSpace(key), strings.Trim(strings.TrimSpace(value), `"'`)
		if key != "name" && key != "description" {
			continue
		}
		if got[key] {
			return Skill{}, refuse(line, "%s: is given twice; keep one", key)
		}
		got[key] = true
		if key == "name" {
			s.Name = value
		} else if len(value) > maxSkillDesc {
			return Skill{}, refuse(line, "the description is %d bytes, over %d; say when to use the skill in a sentence", len(value), maxSkillDesc)
		} else {
			s.Description = value
		}
	}
	return Skill{}, refuse(1, "the front matter does not end with a line ---")
}

// ReadSkillTool is the name of the runtime's own read of a skill.
const ReadSkillTool = "ReadSkill"

// readSkillDef is ReadSkill as the model is offered it.
var readSkillDef = ToolDef{
	Name:        ReadSkillTool,
	Description: "Reads a skill listed in your instructions: its SKILL.md, or with file, another file of the skill's folder. Read a skill before you follow it. It reads files on the runtime's machine only, and changes nothing.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the skill's name, as listed"},"file":{"type":"string","description":"a file of the skill's folder, relative to it; SKILL.md when left out"}},"required":["name"],"additionalProperties":false}`),
}

// readSkill answers a ReadSkill call: the file of the skill named, bounded, or a refusal
// that teaches. A file outside the skill's folder, or reached through a link, is refused.
func readSkill(skills []Skill, args json.RawMessage) (string, error) {
	var a struct {
		Name string `json:"name"`
		File string `json:"file"`
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return "", contract.Errorf(contract.CodeInvalidArgument, "ReadSkill takes {\"name\": skill, \"file\": optional path in it}: %v", err)
	}
	i := slices.IndexFunc(skills, func(s Skill) bool { return s.Name == a.Name })
	if i < 0 {
		names := make([]string, len(skills))
		for j, s := range skills {
			names[j] = s.Name
		}
		return "", contract.Errorf(contract.CodeNotFound, "there is no skill %q; the skills are: %s", a.Name, strings.Join(names, ", "))
	}
	file := a.File
	if file == "" {
		file = "SKILL.md"
	}
	if !filepath.IsLocal(file) {
		return "", contract.Errorf(contract.CodeInvalidArgument, "file %q is not a path inside the skill's folder; name a file relative to it", a.File)
	}
	root, err := os.OpenRoot(skills[i].Dir)
	if err != nil {
		return "", fmt.Errorf("open the skill %s: %w", a.Name, err)
	}
	defer root.Close()
	fi, err := root.Lstat(file)
	if err != nil {
		return "", contract.Errorf(contract.CodeNotFound, "the skill %s has no file %q", a.Name, file)
	}
	if !fi.Mode().IsRegular() {
		return "", contract.Errorf(contract.CodeInvalidArgument, "%s in the skill %s is not a plain file", file, a.Name)
	}
	if fi.Size() > MaxSkillFile {
		return "", contract.Errorf(contract.CodeInvalidArgument, "%s in the skill %s is %d bytes, over the %d a read returns", file, a.Name, fi.Size(), MaxSkillFile)
	}
	b, err := root.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read %s of the skill %s: %w", file, a.Name, err)
	}
	return string(b), nil
}
