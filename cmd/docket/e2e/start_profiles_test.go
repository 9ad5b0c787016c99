package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/agent/provider/providertest"
	"github.com/docketrun/docket/internal/agent/provider/scripted"
	"github.com/docketrun/docket/internal/agent/runner"
	"github.com/docketrun/docket/internal/authority/event"
	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/workbench"
)

// startEnv is a data dir run by a real docket start, set up as a person does: every step
// is a docket process.
type startEnv struct {
	*serveEnv        // home, env, man and vault; no serve of its own
	ws        string // the workspace the worker's file Source is fenced to
}

func newStartEnv(t *testing.T) *startEnv {
	t.Helper()
	dir := t.TempDir()
	s := &startEnv{serveEnv: &serveEnv{home: filepath.Join(dir, "home")}, ws: filepath.Join(dir, "ws")}
	s.env = slices.Clip(append(withoutDocketEnv(), "DOCKET_HOME="+s.home, "DOCKET_PASSPHRASE=correct horse battery"))
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(s.home, "logs", "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("%s:\n%s", filepath.Base(l), b)
		}
	})
	if err := os.MkdirAll(filepath.Join(s.ws, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, job := range []string{"calc-001", "calc-002"} {
		writeFile(t, filepath.Join(s.ws, "data", job+".json"), `{"job_id":"`+job+`","unit_price_cents":129900,"quantity":2,"shipping_cents":3000}`, 0o644)
	}
	s.man = filepath.Join(dir, "tools.json")
	writeFile(t, s.man, `{"format": "docket-worker-tools/1", "tools": {}}`, 0o644)
	s.vault = filepath.Join(dir, "vault.json")
	vault, err := json.Marshal(map[string]any{"sources": map[string]any{"workspace": map[string]string{"type": "file", "root": s.ws}}})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, s.vault, string(vault), 0o600)
	return s
}

func withoutDocketEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DOCKET_") {
			out = append(out, kv)
		}
	}
	return out
}

var openURL = regexp.MustCompile(`docket start: open (http://(\S+)/\?key=(\S+))`)

// run starts docket start with args and waits until it printed its URL; it returns the
// process, the gate's address and the run key.
func (s *startEnv) run(t *testing.T, args ...string) (p *proc, addr, key string) {
	t.Helper()
	p = startProc(t, s.env, append([]string{"start", "--manifest", s.man, "--vault", s.vault}, args...)...)
	p.waitLine(t, "stop with Ctrl-C")
	m := openURL.FindStringSubmatch(p.log())
	if m == nil {
		t.Fatalf("docket start printed no URL:\n%s", p.log())
	}
	if n := strings.Count(p.log(), "?key="); n != 1 {
		t.Errorf("docket start printed its URL %d times, want once", n)
	}
	return p, m[2], m[3]
}

// stop stops docket start with docket stop and waits for it to end. The test is its
// parent, so it reaps it as it exits: docket stop waits for the pid to be gone, and an
// unreaped child lingers as a zombie.
func (s *startEnv) stop(t *testing.T, p *proc) {
	t.Helper()
	reaped := make(chan error, 1)
	go func() {
		<-p.done
		reaped <- p.cmd.Wait()
	}()
	s.docket(t, nil, "stop", "--wait", "60s")
	if err := <-reaped; err != nil {
		t.Errorf("docket start ended with %v", err)
	}
}

// setUpCalculation installs the verified calculation from capDir and binds its Source and
// Tools on the Connection "local" that docket start's worker runs for.
func (s *startEnv) setUpCalculation(t *testing.T, capDir string) {
	t.Helper()
	s.docket(t, nil, "capability", "install", capDir)
	s.docket(t, nil, "source", "bind", "--connection", workbench.Connection, "--name", "workspace", "--type", "file", "--words", "calculation_input,output_file")
	digests := map[string]string{}
	for line := range strings.Lines(s.docket(t, nil, "worker", "--manifest", s.man, "--print-tools", "--workspace-tools", "read-write")) {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) == 5 {
			digests[f[0]] = f[1]
		}
	}
	for _, id := range []string{"docket.workspace.read_json@1", "docket.workspace.write_json@1"} {
		s.docket(t, nil, "tool", "lock", "--connection", workbench.Connection, "--tool", id, "--digest", digests[id])
	}
}

// verifiedCalculation is the example capability as shipped: no write needs a person.
const verifiedCalculation = "../../../examples/verified-calculation/capability"

// profiles waits until ok holds of the project's profiles, read with docket agent
// profile list, and returns them.
func (s *startEnv) profiles(t *testing.T, what string, ok func(map[string]contract.AgentProfile) bool) map[string]contract.AgentProfile {
	t.Helper()
	var last map[string]contract.AgentProfile
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var ps []contract.AgentProfile
		s.docketJSON(t, &ps, "agent", "profile", "list")
		last = map[string]contract.AgentProfile{}
		for _, p := range ps {
			last[p.AgentName] = p
		}
		if ok(last) {
			return last
		}
	}
	t.Fatalf("the profiles never showed %s: %+v", what, last)
	return nil
}

func running(names ...string) func(map[string]contract.AgentProfile) bool {
	return func(ps map[string]contract.AgentProfile) bool {
		for _, n := range names {
			if rt := ps[n].Runtime; rt == nil || rt.State != contract.RuntimeRunning {
				return false
			}
		}
		return true
	}
}

// task posts a task to the supervised runtime of agent, found through the task file it
// wrote beside itself in the data dir.
func (s *startEnv) task(t *testing.T, agent contract.AgentID, text string) runner.TaskAnswer {
	t.Helper()
	path := filepath.Join(s.home, workbench.AgentsDir, string(agent), workbench.TaskFile)
	var ep runner.TaskEndpoint
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(b, &ep) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runtime of %s wrote no task file %s: %v", agent, path, err)
		}
	}
	body, err := json.Marshal(runner.TaskRequest{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ep.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /task: %v", err)
	}
	defer resp.Body.Close()
	var a runner.TaskAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /task = %d %+v (%v)", resp.StatusCode, a, err)
	}
	return a
}

// finished waits until the task id is completed or failed, read with docket task show.
func (s *startEnv) finished(t *testing.T, id contract.TaskID) contract.Task {
	t.Helper()
	var tk contract.Task
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		s.docketJSON(t, &tk, "task", "show", string(id))
		if tk.State.Finished() {
			return tk
		}
	}
	t.Fatalf("task %s never finished: %+v", id, tk)
	return tk
}

// calcScript is the verified calculation's script for job, reading data/<job>.json and
// writing out/<job>.json.
func calcScript(t *testing.T, job string) *scripted.Script {
	t.Helper()
	b, err := os.ReadFile("../../../examples/verified-calculation/script.json")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("calc-001", job, "data/input.json", "data/"+job+".json", "out/result.json", "out/"+job+".json").Replace(string(b))
	s, err := scripted.ParseJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStart_ProfilesOverTheWire: docket start runs one supervised runtime per enabled
// profile. A profile on an OpenAI Chat Completions-compatible server on loopback (no key)
// and one on an Anthropic Messages-compatible server (its key in a 0600 file) each run
// the verified calculation to a certified close, over the real wire formats. A profile
// whose key file is missing is reported failed with where to put the key. The model key
// is nowhere in the data dir (store, events, logs) or in docket start's output, and a
// runtime that crashes is restarted and reported.
func TestStart_ProfilesOverTheWire(t *testing.T) {
	const secret = "sk-ant-test-SECRET-5f0e1d2c3b4a"
	s := newStartEnv(t)
	start, _, _ := s.run(t, "--listen", "127.0.0.1:0")
	s.setUpCalculation(t, verifiedCalculation)
	oa := providertest.NewOpenAI(t, calcScript(t, "calc-001"), "")
	an := providertest.NewAnthropic(t, calcScript(t, "calc-002"), secret)

	keyFile := filepath.Join(t.TempDir(), "anthropic.key")
	writeFile(t, keyFile, secret+"\n", 0o600)
	instructions := filepath.Join(t.TempDir(), "AGENTS.md")
	writeFile(t, instructions, "Always verify the written result before closing a Case.\n", 0o644)
	ids := map[string]contract.AgentID{}
	for _, name := range []string{"calc-openai", "calc-anthropic", "calc-nokey"} {
		var at contract.AgentToken
		s.docketJSON(t, &at, "agent", "create", name)
		ids[name] = at.Agent.ID
	}
	s.docket(t, nil, "agent", "profile", "set", "calc-openai", "--provider", "openai", "--model-url", oa.URL+"/v1", "--model", "local-model",
		"--instructions", instructions, "--max-turns", "20")
	s.docket(t, nil, "agent", "profile", "set", "calc-anthropic", "--provider", "anthropic", "--model-url", an.URL, "--model", "claude-test", "--key-file", keyFile)
	s.docket(t, nil, "agent", "profile", "set", "calc-nokey", "--provider", "anthropic", "--model", "claude-test", "--key-file", filepath.Join(t.TempDir(), "missing.key"), "--no-check")

	ps := s.profiles(t, "both runtimes running and the key-less one failed", func(ps map[string]contract.AgentProfile) bool {
		nk := ps["calc-nokey"].Runtime
		return running("calc-openai", "calc-anthropic")(ps) && nk != nil && nk.State == contract.RuntimeFailed
	})
	if r := ps["calc-nokey"].Runtime.Reason; !strings.Contains(r, "missing.key") || !strings.Contains(r, "first-use form") {
		t.Errorf("the key-less runtime's reason = %q, want the key file and where to enter the key", r)
	}

	// One task is posted by a member into the authority, where the runtime takes it by
	// long-poll; the other comes to the runtime's loopback POST /task, which posts it the
	// same way.
	closed := map[string][]contract.ClosedCase{}
	var posted contract.Task
	s.docketJSON(t, &posted, "task", "post", "--agent", "calc-openai", "--case-type", "verified_calculation", "--key", "job_id=calc-001",
		"Run the verified calculation for job calc-001.")
	done := s.finished(t, posted.ID)
	if done.State != contract.TaskCompleted || done.Result == nil {
		t.Fatalf("calc-openai's task = %+v, want it completed", done)
	}
	closed["calc-openai"] = done.Result.ClosedCases
	a := s.task(t, ids["calc-anthropic"], "Run the verified calculation for job calc-002.")
	if a.ErrorCode != "" || a.State != contract.TaskCompleted || len(a.Pending) != 0 {
		t.Fatalf("calc-anthropic's task = %+v, want it completed with nothing pending", a)
	}
	closed["calc-anthropic"] = a.ClosedCases
	for agent, job := range map[string]string{"calc-openai": "calc-001", "calc-anthropic": "calc-002"} {
		cc := closed[agent]
		if len(cc) != 1 || cc[0].Disposition != contract.DispositionCompleted {
			t.Fatalf("%s closed %+v, want one Case closed completed", agent, cc)
		}
		var cs contract.CaseDetail
		s.docketJSON(t, &cs, "case", "show", string(cc[0].CaseID))
		if cs.Status != contract.CaseClosed || cs.Receipt == nil || !cs.Receipt.Certified {
			t.Errorf("%s's Case = %+v, want closed and certified", agent, cs)
		}
		b, err := os.ReadFile(filepath.Join(s.ws, "out", job+".json"))
		if err != nil || !strings.Contains(string(b), "262800") {
			t.Errorf("out/%s.json = %s (%v), want the derived total", job, b, err)
		}
	}
	// The first request was the model check of docket agent profile set; the runtime's follow.
	if seen := oa.Seen(); len(seen) < 2 || seen[0].System != "" || !strings.Contains(seen[1].System, "Always verify the written result") {
		t.Errorf("the OpenAI-compatible server saw %+v, want the profile's instructions in the system prompt", seen)
	}
	for _, v := range an.Seen() {
		if !v.KeyOK || v.Version == "" {
			t.Errorf("the Anthropic-compatible server saw %+v, want the key and anthropic-version", v)
		}
	}

	// A runtime that crashes is restarted, and its exit is reported where a person looks.
	before := ps["calc-openai"].Runtime.Pid
	if err := syscall.Kill(before, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.profiles(t, "the killed runtime running again", func(ps map[string]contract.AgentProfile) bool {
		rt := ps["calc-openai"].Runtime
		return rt != nil && rt.State == contract.RuntimeRunning && rt.Pid != before && rt.Restarts >= 1
	})
	events := s.docket(t, nil, "events", "tail", "--type", event.RuntimeReported, "--agent", "calc-openai")
	if !strings.Contains(events, "restarting") || !strings.Contains(events, "killed") {
		t.Errorf("the runtime's reports = %s, want its exit (killed) and restart", events)
	}
	if out := s.docket(t, nil, "agent", "profile", "list"); !strings.Contains(out, "failed: the model key file") || !strings.Contains(out, "running pid") {
		t.Errorf("docket agent profile list =\n%s\nwant the runtimes' states and why one failed", out)
	}
	if out := s.docket(t, nil, "ops"); !strings.Contains(out, "runtime of agent calc-nokey: failed: the model key file") || strings.Contains(out, "runtime of agent calc-openai") {
		t.Errorf("docket ops =\n%s\nwant the failed runtime named with why, and not the running ones", out)
	}
	doctor := exec.Command("docket", "doctor")
	doctor.Env = s.env
	out, err := doctor.Output()
	if doctor.ProcessState.ExitCode() != 1 || !regexp.MustCompile(`FAIL runtime +agent calc-nokey: failed: the model key file`).Match(out) ||
		!regexp.MustCompile(`ok +runtime +agent calc-openai: running pid`).Match(out) {
		t.Errorf("docket doctor = %v\n%s\nwant the failed runtime failing it, with why, and the running ones ok", err, out)
	}
	// A disabled profile's runtime is stopped, and reported so.
	pidA := s.profiles(t, "calc-anthropic running", running("calc-anthropic"))["calc-anthropic"].Runtime.Pid
	s.docket(t, nil, "agent", "profile", "set", "calc-anthropic", "--provider", "anthropic", "--model-url", an.URL, "--model", "claude-test", "--key-file", keyFile, "--disabled")
	s.profiles(t, "the disabled runtime stopped", func(ps map[string]contract.AgentProfile) bool {
		rt := ps["calc-anthropic"].Runtime
		return rt != nil && rt.State == contract.RuntimeStopped && strings.Contains(rt.Reason, "disabled")
	})
	if err := syscall.Kill(pidA, 0); err == nil {
		t.Errorf("the stopped runtime's process %d still runs", pidA)
	}
	s.stop(t, start)
	assertNoSecret(t, secret, s.home, start.log())
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the key file's mode = %v (%v), want 0600", fi.Mode(), err)
	}
	stopped := s.profilesOffline(t)
	if rt := stopped["calc-openai"].Runtime; rt == nil || rt.State != contract.RuntimeStopped || !strings.Contains(rt.Reason, "docket start stopped") {
		t.Errorf("after docket stop the runtime is %+v, want reported stopped", rt)
	}
}

// profilesOffline reads the profiles with a plain docket serve on the data dir, after
// docket start stopped.
func (s *startEnv) profilesOffline(t *testing.T) map[string]contract.AgentProfile {
	t.Helper()
	srv := startProc(t, s.env, "serve", "--listen", "127.0.0.1:0")
	s.docket(t, nil, "doctor", "--wait", "30s")
	var ps []contract.AgentProfile
	s.docketJSON(t, &ps, "agent", "profile", "list")
	srv.cmd.Process.Signal(os.Interrupt)
	out := map[string]contract.AgentProfile{}
	for _, p := range ps {
		out[p.AgentName] = p
	}
	return out
}

// assertNoSecret fails t when secret is in any file under dir or in output.
func assertNoSecret(t *testing.T, secret, dir, output string) {
	t.Helper()
	if strings.Contains(output, secret) {
		t.Errorf("the model key is in docket start's output")
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(secret)) && filepath.Base(path) != workbench.ModelKeyFile {
			t.Errorf("the model key is in %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
