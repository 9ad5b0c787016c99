package capability

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	"github.com/docketrun/docket/internal/contract"
)

// ManifestFile is the name of a package's manifest.
const ManifestFile = "capability.toml"

// manifest is capability.toml as written; doc.go documents each key.
type manifest struct {
	ID          string         `toml:"id"`
	Version     string         `toml:"version"`
	Title       string         `toml:"title"`
	Description string         `toml:"description"`
	Sources     []sourceSpec   `toml:"source"`
	CaseTypes   []caseTypeSpec `toml:"case_type"`
	Actions     []actionSpec   `toml:"action"`
}

type sourceSpec struct {
	Name  string   `toml:"name"`
	Type  string   `toml:"type"`
	Words []string `toml:"words"`
	Tier  string   `toml:"tier"`
}

type keySpec struct {
	Predicate string   `toml:"predicate"`
	Args      []string `toml:"args"`
}

type caseTypeSpec struct {
	Name                  string   `toml:"name"`
	Title                 string   `toml:"title"`
	Description           string   `toml:"description"`
	Key                   keySpec  `toml:"key"`
	Opening               string   `toml:"opening"`
	OpeningFloor          string   `toml:"opening_floor"`
	Acceptance            string   `toml:"acceptance"`
	MinimumGroundingFloor string   `toml:"minimum_grounding_floor"`
	OncePerCase           []string `toml:"once_per_case"`
	DirectActions         bool     `toml:"direct_actions"`
}

type paramSpec struct {
	Name        string `toml:"name"`
	Type        string `toml:"type"`
	Description string `toml:"description"`
	Optional    bool   `toml:"optional"`
}

type returnSpec struct {
	Predicate string            `toml:"predicate"`
	Args      map[string]string `toml:"args"`
}

type executionSpec struct {
	Tool        string       `toml:"tool"`
	SourceTypes []string     `toml:"source_types"`
	Source      string       `toml:"source"`
	Kind        string       `toml:"kind"`
	Returns     []returnSpec `toml:"returns"`
}

type actionSpec struct {
	Name          string            `toml:"name"`
	Description   string            `toml:"description"`
	Approval      string            `toml:"approval"`
	Params        []paramSpec       `toml:"param"`
	Preconditions []string          `toml:"preconditions"`
	Bindings      map[string]string `toml:"bindings"`
	Effects       []string          `toml:"effects"`
	Execution     *executionSpec    `toml:"execution"`
}

// decodeManifest decodes capability.toml strictly. A TOML error ends decoding; unknown
// keys are reported together, each with the line the locator finds for it.
func decodeManifest(src []byte, loc *locator, c *checker) (manifest, bool) {
	var m manifest
	md, err := toml.Decode(string(src), &m)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			c.add(loc.at(pe.Position.Line), "the file is not valid TOML: %s", pe.Message)
		} else if m := typeErrRE().FindStringSubmatch(err.Error()); m != nil {
			// Type mismatches arrive as plain errors that carry the line in their text.
			line, _ := strconv.Atoi(m[1])
			words, ok := contract.TOMLTypeWords(m[3])
			if !ok {
				words = m[3]
			}
			c.add(loc.at(line), "the value of %s is wrong: %s", m[2], words)
		} else {
			c.add(ManifestFile, "the file does not decode: %v", err)
		}
		return manifest{}, false
	}
	for _, k := range md.Undecoded() {
		known := keysAt(reflect.TypeFor[manifest](), k[:len(k)-1])
		hint := ""
		if near, ok := contract.Nearest(k[len(k)-1], known); ok {
			hint = fmt.Sprintf(" (did you mean %q?)", near)
		}
		c.add(loc.at(loc.keyLine(k)), "unknown key %q%s; the keys here are %s (docs/capabilities.md)", k.String(), hint, strings.Join(known, ", "))
	}
	return m, true
}

// keysAt lists the keys the table at path of a t takes, in the order t declares them,
// read from the toml tags: the schema itself, so a suggestion never drifts from it. A
// path that reaches no table lists nothing.
func keysAt(t reflect.Type, path []string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	if len(path) > 0 {
		for i := range t.NumField() {
			if t.Field(i).Tag.Get("toml") == path[0] {
				return keysAt(t.Field(i).Type, path[1:])
			}
		}
		return nil
	}
	var out []string
	for i := range t.NumField() {
		if name := t.Field(i).Tag.Get("toml"); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// typeErrRE matches BurntSushi/toml's type errors: `toml: line 2 (last key "version"): …`.
var typeErrRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`) })

// locator finds the line of a key in capability.toml. BurntSushi/toml reports lines only
// for syntax and type errors, so the locator reads the text: array-of-tables headers in
// order, then "key =" lines inside the matching section. It is best effort; a key it cannot
// find reports the file without a line.
type locator struct {
	lines []string
}

func newLocator(src []byte) *locator {
	return &locator{lines: strings.Split(string(src), "\n")}
}

var headerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[\[?\s*([A-Za-z0-9_.\-" ]+?)\s*\]\]?`) })

// header returns the dotted table name of a header line and whether it is an array item.
func header(line string) (name string, array, ok bool) {
	m := headerRE().FindStringSubmatch(line)
	if m == nil {
		return "", false, false
	}
	return strings.ReplaceAll(m[1], " ", ""), strings.HasPrefix(strings.TrimSpace(line), "[["), true
}

// at formats a line of capability.toml as a problem location.
func (l *locator) at(line int) string {
	if line <= 0 {
		return ManifestFile
	}
	return ManifestFile + ":" + strconv.Itoa(line)
}

// section returns the line range [from, to) of the index-th [[table]] item, or of the
// top level when table is "".
func (l *locator) section(table string, index int) (from, to int) {
	if table == "" {
		for i, line := range l.lines {
			if _, _, ok := header(line); ok {
				return 0, i
			}
		}
		return 0, len(l.lines)
	}
	n := -1
	from = -1
	for i, line := range l.lines {
		name, array, ok := header(line)
		if !ok {
			continue
		}
		if from >= 0 && (name == table && array || name != table && !strings.HasPrefix(name, table+".")) {
			return from, i
		}
		if name == table && array {
			n++
			if n == index {
				from = i
			}
		}
	}
	if from < 0 {
		return -1, -1
	}
	return from, len(l.lines)
}

// line returns the 1-based line of key in the index-th [[table]] item (or at the top level
// when table is ""), or of the item's header when key is "", or 0.
func (l *locator) line(table string, index int, key string) int {
	from, to := l.section(table, index)
	if from < 0 {
		return 0
	}
	if key == "" {
		return from + 1
	}
	for i := from; i < to; i++ {
		if setsKey(l.lines[i], key) {
			return i + 1
		}
		if name, _, ok := header(l.lines[i]); ok && name == table+"."+key {
			return i + 1
		}
	}
	return from + 1
}

// setsKey reports whether line is `key = …`, the key optionally quoted.
func setsKey(line, key string) bool {
	s := strings.TrimLeft(line, " \t")
	quoted := strings.HasPrefix(s, `"`)
	s = strings.TrimPrefix(s, `"`)
	if !strings.HasPrefix(s, key) {
		return false
	}
	s = s[len(key):]
	if quoted {
		if !strings.HasPrefix(s, `"`) {
			return false
		}
		s = s[1:]
	}
	return strings.HasPrefix(strings.TrimLeft(s, " \t"), "=")
}

// keyLine returns a best guess at the line of a TOML key path such as action.execution.tol:
// the first line that sets its last piece, or 0.
func (l *locator) keyLine(k toml.Key) int {
	if len(k) == 0 {
		return 0
	}
	last := k[len(k)-1]
	re := regexp.MustCompile(`(^|[\s{,.])"?` + regexp.QuoteMeta(last) + `"?\s*=|^\s*\[\[?[^\]]*\b` + regexp.QuoteMeta(last) + `\s*\]`)
	for i, line := range l.lines {
		if re.MatchString(line) {
			return i + 1
		}
	}
	return 0
}

// posPrefixRE splits "file:line:col: message", the form of syntax errors.
var posPrefixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^\s:]+:\d+:\d+): (.*)$`) })

// checker collects problems.
type checker struct {
	problems Problems
}

// add records a capability_invalid problem at where.
func (c *checker) add(where, format string, args ...any) {
	c.addCode(where, contract.CodeCapabilityInvalid, format, args...)
}

func (c *checker) addCode(where string, code contract.Code, format string, args ...any) {
	c.problems = append(c.problems, Problem{Where: where, Code: code, Message: fmt.Sprintf(format, args...)})
}

// addErr records a problem from a syntax error, which already names its position.
func (c *checker) addErr(where string, err error) {
	code := contract.CodeOf(err)
	if code == "" {
		code = contract.CodeCapabilityInvalid
	}
	msg := err.Error()
	var ce *contract.Error
	if errors.As(err, &ce) {
		msg = ce.Teaching
	}
	if m := posPrefixRE().FindStringSubmatch(msg); where == "" && m != nil {
		where, msg = m[1], m[2] // a syntax error names its own file:line:col
	}
	c.problems = append(c.problems, Problem{Where: where, Code: code, Message: msg})
}
