package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/certs"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/secheaders"
)

// tlsEnv is a data dir served over TLS on every interface by a real docket serve, with a
// certificate docket cert made, and a second, empty data dir standing for another
// machine.
type tlsEnv struct {
	*serveEnv
	tlsDir string   // docket cert's directory: ca.pem, server.pem and their keys
	ca     string   // the CA file other machines are given
	remote []string // the environment of a docket command on the other machine: its own data dir, no DOCKET_CA
}

// newTLSEnv makes the certificate with docket cert, starts serve over TLS with it and
// sets up the verified calculation's Connection and Agent. Its CLI on serve's machine
// trusts the CA through DOCKET_CA.
func newTLSEnv(t *testing.T) *tlsEnv {
	t.Helper()
	dir := t.TempDir()
	e := &tlsEnv{tlsDir: filepath.Join(dir, "tls")}
	e.ca = filepath.Join(e.tlsDir, certs.CAFile)
	runOK(t, withoutDocketEnv(), "cert", "--host", "docket.test", "--dir", e.tlsDir)
	t.Setenv(certs.CAEnv, e.ca)
	e.serveEnv = newServeEnv(t, "", "../../../examples/verified-calculation/capability", "workspace",
		[]string{"calculation_input", "output_file"}, `{"format": "docket-worker-tools/1", "tools": {}}`,
		"--listen", "0.0.0.0:0", "--host", "docket.test",
		"--tls-cert", filepath.Join(e.tlsDir, certs.ServerFile), "--tls-key", filepath.Join(e.tlsDir, certs.ServerKeyFile))
	if !strings.HasPrefix(e.url, "https://127.0.0.1:") {
		t.Fatalf("serve wrote %q into its url file, want https://127.0.0.1:PORT", e.url)
	}
	e.remote = append(withoutDocketEnv(), "DOCKET_HOME="+filepath.Join(dir, "laptop"))
	return e
}

// runOK runs docket with args in env and returns its stdout; a failure ends the test.
func runOK(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, errOut, err := runDocket(env, args...)
	if err != nil {
		t.Fatalf("docket %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// runFails runs docket with args in env, which must fail; it returns its stderr.
func runFails(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, errOut, err := runDocket(env, args...)
	if err == nil {
		t.Fatalf("docket %s succeeded, want a refusal:\n%s", strings.Join(args, " "), out)
	}
	return errOut
}

func runDocket(env []string, args ...string) (string, string, error) {
	cmd := exec.Command("docket", args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// TestServeTLS_OtherMachine runs the verified calculation against a serve that listens
// beyond loopback over TLS with docket cert's certificate: a worker, the CLI (docket
// login --url from another data dir) and an agent runtime each reach it over https with
// --ca, as from another machine, and the Case closes; then docket agent serve there takes
// a posted task and completes it.
func TestServeTLS_OtherMachine(t *testing.T) {
	e := newTLSEnv(t)
	e.lock(t, "docket.workspace.read_json@1", "docket.workspace.write_json@1")

	w := startProc(t, append(slices.Clone(e.remote), "DOCKET_CONNECTION_KEY="+e.key),
		"worker", "--url", e.url, "--ca", e.ca, "--manifest", e.man, "--vault", e.vault, "--workspace-tools", "read-write")
	w.waitLine(t, "lease acquired")

	out := runOK(t, append(slices.Clone(e.remote), "DOCKET_PASSPHRASE=correct horse battery"),
		"login", "--url", e.url, "--ca", e.ca, "--member", "admin")
	if !strings.Contains(out, "logged in as member admin") || !strings.Contains(out, "CA saved to") {
		t.Errorf("docket login --url --ca = %q, want logged in with the CA saved", out)
	}
	// The saved URL and CA serve the next verbs of that machine without flags.
	if out := runOK(t, e.remote, "agent", "list"); !strings.Contains(out, "one") {
		t.Errorf("docket agent list from the other machine = %q, want agent one", out)
	}

	out = runOK(t, append(slices.Clone(withoutDocketEnv()), "DOCKET_HOME="+t.TempDir(), "DOCKET_AGENT_TOKEN="+e.token),
		"agent", "run", "--url", e.url+"/mcp", "--ca", e.ca,
		"--script", "../../../examples/verified-calculation/script.json", "write the result of job calc-001")
	if !strings.Contains(out, "Case is closed as completed") {
		t.Errorf("docket agent run over TLS = %q, want the script's final answer", out)
	}
	if out := runOK(t, e.remote, "events", "verify"); !strings.Contains(out, "chain ok") {
		t.Errorf("docket events verify from the other machine = %q, want chain ok", out)
	}

	// docket agent serve on the other machine takes a task posted on serve's own by
	// long-poll over TLS, and runs it.
	script := filepath.Join(t.TempDir(), "look.json")
	writeFile(t, script, `{"turns":[
		{"calls":[{"as":"open","tool":"OpenCase","arguments":{"caseType":"exploration","businessKey":{"topic":"t"}}}]},
		{"calls":[{"tool":"CloseCase","arguments":{"caseId":{"$ref":"open.result.case.caseId"},"disposition":"abandoned","reason":"only looking"}}]},
		{"final":"closed"}]}`, 0o644)
	startProc(t, append(slices.Clone(e.remote), "DOCKET_AGENT_TOKEN="+e.token), "agent", "serve", "--url", e.url+"/mcp", "--ca", e.ca, "--script", script)
	var task contract.Task
	if err := json.Unmarshal([]byte(e.docket(t, nil, "task", "post", "--agent", "one", "-o", "json", "look around")), &task); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); task.State != contract.TaskCompleted; time.Sleep(100 * time.Millisecond) {
		if task.State.Finished() || time.Now().After(deadline) {
			t.Fatalf("the task posted for docket agent serve over TLS is %s (%+v), want completed", task.State, task.Result)
		}
		if err := json.Unmarshal([]byte(e.docket(t, nil, "task", "show", string(task.ID), "-o", "json")), &task); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServeTLS_SecureCookieHSTS: over serve's own TLS, a session cookie is Secure and
// answers carry HSTS; the names given with --host pass the Host check, with or without
// the port, and others do not.
func TestServeTLS_SecureCookieHSTS(t *testing.T) {
	e := newTLSEnv(t)
	trust, err := certs.LoadTrust(e.ca)
	if err != nil {
		t.Fatal(err)
	}
	hc := trust.Client()
	resp, err := hc.Post(e.url+"/api/v1/sessions/cookie", "application/json", strings.NewReader(`{"name":"admin","passphrase":"correct horse battery"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("login over TLS: %s", resp.Status)
	}
	if got := resp.Header.Get("Strict-Transport-Security"); got != secheaders.StrictTransportSecurity {
		t.Errorf("Strict-Transport-Security = %q, want %q", got, secheaders.StrictTransportSecurity)
	}
	if cs := resp.Cookies(); len(cs) != 1 || !cs[0].Secure || !cs[0].HttpOnly {
		t.Errorf("session cookies over TLS = %+v, want one, Secure and HttpOnly", cs)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol over TLS = %s, want HTTP/2 by ALPN", resp.Proto)
	}

	u, err := url.Parse(e.url)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		host string
		want int
	}{
		{"docket.test:" + u.Port(), http.StatusOK},
		{"docket.test", http.StatusOK},
		{"DOCKET.test:" + u.Port(), http.StatusOK},
		{"evil.test:" + u.Port(), http.StatusForbidden},
		{"docket.test:1", http.StatusForbidden},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.url+"/api/v1/health", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = tt.host
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("Host %s: %s, want %d", tt.host, resp.Status, tt.want)
		}
	}
}

// TestServeTLS_WrongCA: a client given another CA than the one that signed serve's
// certificate refuses it before sending any credential, with tls_untrusted naming the
// CA file: the CLI, a worker (which stops rather than retry) and a runtime. Without any
// CA, the system's roots refuse it too.
func TestServeTLS_WrongCA(t *testing.T) {
	e := newTLSEnv(t)
	other := filepath.Join(t.TempDir(), "other")
	runOK(t, withoutDocketEnv(), "cert", "--host", "docket.test", "--dir", other)
	wrong := filepath.Join(other, certs.CAFile)

	errOut := runFails(t, append(slices.Clone(e.remote), "DOCKET_PASSPHRASE=correct horse battery"),
		"login", "--url", e.url, "--ca", wrong, "--member", "admin")
	if !strings.Contains(errOut, "tls_untrusted") || !strings.Contains(errOut, wrong) {
		t.Errorf("docket login with another CA: %q, want tls_untrusted naming %s", errOut, wrong)
	}
	if _, err := os.Stat(filepath.Join(e.remote[len(e.remote)-1][len("DOCKET_HOME="):], "token")); err == nil {
		t.Errorf("a refused login saved a token")
	}
	errOut = runFails(t, append(slices.Clone(e.remote), "DOCKET_PASSPHRASE=correct horse battery"),
		"login", "--url", e.url, "--member", "admin")
	if !strings.Contains(errOut, "tls_untrusted") || !strings.Contains(errOut, "no CA this system trusts") {
		t.Errorf("docket login with the system's roots: %q, want tls_untrusted saying no CA of the system signed it", errOut)
	}

	w := startProc(t, append(slices.Clone(e.remote), "DOCKET_CONNECTION_KEY="+e.key),
		"worker", "--url", e.url, "--ca", wrong, "--manifest", e.man, "--vault", e.vault)
	w.waitLine(t, "tls_untrusted")
	select {
	case <-w.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the worker went on after refusing serve's certificate:\n%s", w.log())
	}
	if !strings.Contains(w.log(), wrong) {
		t.Errorf("the worker's refusal does not name the CA %s:\n%s", wrong, w.log())
	}

	errOut = runFails(t, append(slices.Clone(e.remote), "DOCKET_AGENT_TOKEN="+e.token),
		"agent", "run", "--url", e.url+"/mcp", "--ca", wrong, "--script", "../../../examples/verified-calculation/script.json", "x")
	if !strings.Contains(errOut, "tls_untrusted") || !strings.Contains(errOut, wrong) {
		t.Errorf("docket agent run with another CA: %q, want tls_untrusted naming %s", errOut, wrong)
	}
}

// TestServeTLS_ReloadOnHUP: a certificate docket cert re-issues is presented by the
// running serve after SIGHUP, on the same listener, and one that does not load leaves
// the one in use.
func TestServeTLS_ReloadOnHUP(t *testing.T) {
	e := newTLSEnv(t)
	before := presented(t, e.url, e.ca)
	if slices.Contains(before.DNSNames, "new.test") {
		t.Fatalf("the first certificate already names new.test: %v", before.DNSNames)
	}
	out := runOK(t, withoutDocketEnv(), "cert", "--host", "docket.test,new.test", "--dir", e.tlsDir)
	if !strings.Contains(out, "signed with the CA already in") {
		t.Errorf("docket cert again = %q, want the same CA to sign", out)
	}
	if err := e.srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	e.srv.waitLine(t, "TLS certificate reloaded")
	after := presented(t, e.url, e.ca)
	if after.SerialNumber.Cmp(before.SerialNumber) == 0 || !slices.Contains(after.DNSNames, "new.test") {
		t.Errorf("after SIGHUP serve presents serial %x names %v, want the new certificate naming new.test", after.SerialNumber, after.DNSNames)
	}

	// A key that is not the certificate's: the reload fails and the pair in use stays.
	key := filepath.Join(e.tlsDir, certs.ServerKeyFile)
	if err := os.WriteFile(key, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	e.srv.waitLine(t, "TLS certificate not reloaded")
	if kept := presented(t, e.url, e.ca); kept.SerialNumber.Cmp(after.SerialNumber) != 0 {
		t.Errorf("after a failed reload serve presents serial %x, want %x still", kept.SerialNumber, after.SerialNumber)
	}
}

// presented is the certificate serve at base presents in a new handshake.
func presented(t *testing.T, base, ca string) *x509.Certificate {
	t.Helper()
	trust, err := certs.LoadTrust(ca)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", u.Host, trust.TLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}
