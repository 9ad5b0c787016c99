package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"

	"mvdan.cc/sh/v3/syntax"
)

// A command_prefix class covers a shell command word by word (docs/policies.md): the
// command is parsed by POSIX shell rules, and it is covered only when it is one simple
// command of literal words — no expansion, substitution, redirection, assignment or
// control operator — whose first words, after quote removal, are the prefix's words. A
// string prefix would not do: "go test" is a string prefix of "go testify", and a prefix
// of one space was a string prefix of every command starting with two spaces.

// runsItsArguments are the programs a command_prefix may not name first, with why: each
// runs (some of) its arguments as a program or as code, so a prefix naming it covers any
// program at all. An interpreter is here because its bare name covers "-c CODE"; a prefix
// that names the script it runs ("python3 tools/gen.py") is refused too, since the words
// after the prefix are free and "-c" may follow. This is the one list; docs/policies.md
// prints it.
var runsItsArguments = map[string]string{
	"sh": "a shell", "bash": "a shell", "dash": "a shell", "zsh": "a shell", "ksh": "a shell", "mksh": "a shell",
	"csh": "a shell", "tcsh": "a shell", "fish": "a shell", "busybox": "a shell and every other tool",
	"eval": "runs its arguments as shell code", "exec": "runs its arguments as a program", "command": "runs its arguments as a program",
	"builtin": "runs its arguments as a shell builtin", "source": "runs a file as shell code", ".": "runs a file as shell code",
	"env": "runs its arguments as a program", "xargs": "runs its arguments as a program", "sudo": "runs its arguments as another user",
	"doas": "runs its arguments as another user", "su": "runs a shell as another user", "runuser": "runs its arguments as another user",
	"nohup": "runs its arguments as a program", "timeout": "runs its arguments as a program", "nice": "runs its arguments as a program",
	"ionice": "runs its arguments as a program", "chrt": "runs its arguments as a program", "taskset": "runs its arguments as a program",
	"setsid": "runs its arguments as a program", "stdbuf": "runs its arguments as a program", "time": "runs its arguments as a program",
	"chroot": "runs its arguments as a program", "nsenter": "runs its arguments as a program", "unshare": "runs its arguments as a program",
	"flock": "runs its arguments as a program", "watch": "runs its arguments as a program", "strace": "runs its arguments as a program",
	"ltrace": "runs its arguments as a program", "gdb": "runs its arguments as a program", "script": "runs its arguments as a program",
	"systemd-run": "runs its arguments as a program", "parallel": "runs its arguments as a program", "ssh": "runs its arguments as a program elsewhere",
	"find": "runs a program with -exec", "awk": "runs its first argument as code", "gawk": "runs its first argument as code",
	"python": "an interpreter (-c)", "python2": "an interpreter (-c)", "python3": "an interpreter (-c)", "perl": "an interpreter (-e)",
	"ruby": "an interpreter (-e)", "node": "an interpreter (-e)", "nodejs": "an interpreter (-e)", "deno": "an interpreter (eval)",
	"bun": "an interpreter (-e)", "php": "an interpreter (-r)", "lua": "an interpreter (-e)", "tclsh": "an interpreter",
	"Rscript": "an interpreter (-e)", "osascript": "an interpreter (-e)", "npx": "runs its arguments as a program",
}

// whyAssigns is why a command that assigns a variable before its program is covered by
// no class: FOO=1 changes what the program does (GOFLAGS=-exec=sh go test runs sh).
const whyAssigns = "it assigns a variable, which changes what the command runs"

// commandWords splits command by POSIX shell rules into its words after quote removal.
// why is not empty when command is not one simple command of literal words: then no
// class covers it.
func commandWords(command string) (words []string, why string) {
	if strings.ContainsAny(command, shellSyntax) {
		return nil, "it holds shell syntax (one of ; & | $ ` < > ( ) \\ or a newline)"
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, "it does not parse as a shell command"
	}
	if len(f.Stmts) != 1 {
		return nil, "it is not one simple command"
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	switch {
	case !ok || st.Negated || st.Background || st.Coprocess || st.Disown || len(st.Redirs) > 0:
		return nil, "it is not one simple command"
	case len(call.Assigns) > 0:
		return nil, whyAssigns
	}
	for _, w := range call.Args {
		lit, ok := literal(w)
		if !ok {
			return nil, "a word of it is not literal"
		}
		words = append(words, lit)
	}
	return words, ""
}

// literal returns w after quote removal when it holds only literal text.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// checkCommandPrefix refuses a command_prefix that would cover more than the commands it
// names; nil accepts it.
func checkCommandPrefix(prefix string) error {
	switch {
	case prefix == "":
		return nil // no command_prefix: the class sets another field
	case strings.TrimSpace(prefix) == "":
		return fmt.Errorf("command_prefix %q is only whitespace; name the start of one simple command, such as \"go test\"", prefix)
	case strings.TrimSpace(prefix) != prefix:
		return fmt.Errorf("command_prefix %q starts or ends with whitespace; write its words with one space between them, such as \"go test\"", prefix)
	case strings.IndexFunc(prefix, unicode.IsControl) >= 0:
		return fmt.Errorf("command_prefix %q holds a control character; write its words with one space between them", prefix)
	case strings.ContainsAny(prefix, "*?[]{}~#'\""):
		return fmt.Errorf("command_prefix %q holds a pattern, a quote or a comment; a prefix is plain words, matched as written, such as \"go test\"", prefix)
	}
	words, why := commandWords(prefix)
	switch {
	case why == whyAssigns:
		return fmt.Errorf("command_prefix %q assigns a variable, which changes what the command runs; name the program first, such as \"go test\"", prefix)
	case why != "":
		return fmt.Errorf("command_prefix %q holds shell syntax (%s); name the start of one simple command, such as \"go test\"", prefix, why)
	case len(words) == 0:
		return fmt.Errorf("command_prefix %q names no program; name the start of one simple command, such as \"go test\"", prefix)
	case strings.Join(words, " ") != prefix:
		return fmt.Errorf("command_prefix %q must be its words with one space between them: %q", prefix, strings.Join(words, " "))
	}
	if why, ok := runsItsArguments[path.Base(words[0])]; ok {
		return fmt.Errorf("command_prefix %q names %s, which %s, so the prefix would cover any program; name the program the class allows, such as \"go test\" (docs/policies.md lists these)", prefix, words[0], runsWhy(why))
	}
	return nil
}

// runsWhy reads a runsItsArguments entry after "which".
func runsWhy(why string) string {
	if strings.HasPrefix(why, "a ") || strings.HasPrefix(why, "an ") {
		return "is " + why
	}
	return why
}

// coversCommand reports whether command, split word by word, starts with prefix's words.
// A prefix Parse would refuse covers nothing, however the class was made.
func coversCommand(prefix, command string) bool {
	if prefix == "" || checkCommandPrefix(prefix) != nil {
		return false
	}
	want, why := commandWords(prefix)
	if why != "" || len(want) == 0 {
		return false
	}
	got, why := commandWords(command)
	return why == "" && len(got) >= len(want) && slices.Equal(got[:len(want)], want)
}
