package environ_test

import (
	"testing"

	"github.com/docketrun/docket/internal/environ"
	"github.com/google/go-cmp/cmp"
)

func TestAllow(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "DOCKET_HOME=/d", "OPENAI_API_KEY=sk", "aws_secret_access_key=s", "REPORT_MONTH=11", "=x", "junk"}
	tests := []struct {
		name string
		pass []string
		want []string
	}{
		{"basics only", nil, []string{"PATH=/bin", "HOME=/h", "LC_ALL=C"}},
		{"pass, case-insensitively; DOCKET_ never", []string{"report_month", "docket_home"}, []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "REPORT_MONTH=11"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, environ.Allow(env, tt.pass)); diff != "" {
				t.Errorf("Allow(%q) (-want +got):\n%s", tt.pass, diff)
			}
		})
	}
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ok   bool
	}{
		{"REPORT_MONTH", true}, {"https_proxy", true}, {"_X1", true},
		{"", false}, {"1ABC", false}, {"A=B", false}, {"A B", false}, {"DOCKET_URL", false}, {"docket_home", false}, {"ÄRGER", false},
	}
	for _, tt := range tests {
		if err := environ.CheckName(tt.name); (err == nil) != tt.ok {
			t.Errorf("CheckName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
