package worker_test

import (
	"testing"

	"github.com/docketrun/docket/internal/worker"
	"github.com/google/go-cmp/cmp"
)

func TestScrubEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/home/w", "LANG=C", "LC_ALL=C", "TZ=UTC", "DOCKET_CONNECTION_KEY=dkt_con_x", "docket_home=/x",
		"OPENAI_API_KEY=sk", "anthropic_api_key=sk", "GITHUB_TOKEN=t", "My_Secret_Thing=s", "PGPASSWORD=p", "SSH_PRIVATE_KEY=k",
		"ORDERS_DSN=d", "DATABASE_URL=postgres://", "AWS_REGION=eu", "aws_secret_access_key=s", "REPORT_MONTH=2026-11",
		// What a deny-list let through.
		"DB_PASS=p", "MY_APIKEY=k", "GPG_PASSPHRASE=p", "MONGODB_URI=mongodb://u:p@h", "SQLALCHEMY_DATABASE_URI=postgresql://u:p@h",
		"HTTPS_PROXY=http://u:p@proxy:3128", "NPM_CONFIG__AUTHTOKEN=t", "CI_JOB_JWT=j", "AUTHORIZATION=Bearer x", "PRIVATE_KEY_PEM=k"}
	tests := []struct {
		name string
		pass []string
		want []string
	}{
		{"basics only by default", nil, []string{"PATH=/bin", "HOME=/home/w", "LANG=C", "LC_ALL=C", "TZ=UTC"}},
		{"an empty pass is basics only", []string{}, []string{"PATH=/bin", "HOME=/home/w", "LANG=C", "LC_ALL=C", "TZ=UTC"}},
		{"pass, case-insensitively", []string{"report_month", "GITHUB_TOKEN", "DOCKET_CONNECTION_KEY", "https_proxy"},
			[]string{"PATH=/bin", "HOME=/home/w", "LANG=C", "LC_ALL=C", "TZ=UTC", "GITHUB_TOKEN=t", "REPORT_MONTH=2026-11", "HTTPS_PROXY=http://u:p@proxy:3128"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, worker.ScrubEnv(environ, tt.pass)); diff != "" {
				t.Errorf("ScrubEnv (-want +got):\n%s", diff)
			}
		})
	}
}
