package worker_test

import (
	"testing"

	"github.com/docketrun/docket/internal/worker"
	"github.com/google/go-cmp/cmp"
)

func TestScrubEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/home/w", "LANG=C", "TZ=UTC", "DOCKET_CONNECTION_KEY=dkt_con_x", "docket_home=/x",
		"OPENAI_API_KEY=sk", "anthropic_api_key=sk", "GITHUB_TOKEN=t", "My_Secret_Thing=s", "PGPASSWORD=p", "SSH_PRIVATE_KEY=k",
		"ORDERS_DSN=d", "DATABASE_URL=postgres://", "AWS_REGION=eu", "aws_secret_access_key=s", "REPORT_MONTH=2026-11"}
	tests := []struct {
		name string
		pass []string
		want []string
	}{
		{"scrubbed", nil, []string{"PATH=/bin", "HOME=/home/w", "LANG=C", "TZ=UTC", "REPORT_MONTH=2026-11"}},
		{"allow-list", []string{"REPORT_MONTH", "GITHUB_TOKEN", "DOCKET_CONNECTION_KEY"},
			[]string{"PATH=/bin", "HOME=/home/w", "LANG=C", "GITHUB_TOKEN=t", "REPORT_MONTH=2026-11"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, worker.ScrubEnv(environ, tt.pass)); diff != "" {
				t.Errorf("ScrubEnv (-want +got):\n%s", diff)
			}
		})
	}
}
