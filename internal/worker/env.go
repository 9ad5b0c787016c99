package worker

import (
	"slices"
	"strings"
)

// Scrub patterns for the environment of programs a worker starts (DESIGN.md §8.3), matched
// on the upper-cased name. They err towards dropping: a program that needs a secret gets
// it through env.pass, where a person wrote its name down.
var (
	scrubPrefixes = []string{"DOCKET_", "AWS_", "ANTHROPIC_", "OPENAI_", "AZURE_", "GOOGLE_", "GCLOUD_", "GCP_",
		"GITHUB_", "GH_", "GITLAB_", "HF_", "HUGGING", "MISTRAL_", "GROQ_", "COHERE_", "GEMINI_", "STRIPE_", "SLACK_", "VAULT_"}
	scrubSuffixes = []string{"_API_KEY", "_KEY", "_TOKEN", "_PRIVATE_KEY", "_DSN", "_PAT", "_PWD", "_AUTH", "_URL"}
	scrubContains = []string{"SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "COOKIE", "SESSION"}
	scrubExact    = []string{"DATABASE_URL", "SSH_AUTH_SOCK", "KUBECONFIG", "DOCKER_AUTH_CONFIG", "PGPASSFILE", "NETRC", "TOKEN", "KEY"}
)

// minimalEnv names the variables kept under an allow-list besides those it names.
var minimalEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// ScrubEnv returns the environment for a started program, from environ in os.Environ
// form. With pass empty it is environ without every variable a scrub pattern matches;
// with pass set it is only the variables pass names plus PATH, HOME, LANG and TMPDIR.
// DOCKET_* is dropped in both cases: a tool never sees the worker's own credentials.
func ScrubEnv(environ, pass []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		upper := strings.ToUpper(name)
		if strings.HasPrefix(upper, "DOCKET_") {
			continue
		}
		if len(pass) > 0 {
			if slices.Contains(pass, name) || slices.Contains(minimalEnv, name) {
				out = append(out, kv)
			}
			continue
		}
		if !secretName(upper) {
			out = append(out, kv)
		}
	}
	return out
}

func secretName(upper string) bool {
	if slices.Contains(scrubExact, upper) {
		return true
	}
	for _, p := range scrubPrefixes {
		if strings.HasPrefix(upper, p) {
			return true
		}
	}
	for _, s := range scrubSuffixes {
		if strings.HasSuffix(upper, s) {
			return true
		}
	}
	for _, c := range scrubContains {
		if strings.Contains(upper, c) {
			return true
		}
	}
	return false
}
