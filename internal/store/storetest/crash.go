package storetest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/slowtest"
	"github.com/docketrun/docket/internal/store"
)

// crashChildEnv names the variable that makes [CrashChild] write: its value is the round.
const crashChildEnv = "DOCKET_STORE_CRASH_CHILD"

// crashProject is the log the crash test writes.
const crashProject = "crash"

// CrashChild is the writing half of [RunCrash]: called from a test of the
// implementation's package, it does nothing unless the test binary was started by
// RunCrash; then it opens the store with open, appends events from 8 writers at once
// until it is killed, and prints "ack <id>" for each event as its Update returns nil.
func CrashChild(t *testing.T, open func(context.Context) (store.Store, error)) {
	round := os.Getenv(crashChildEnv)
	if round == "" {
		t.Skip("run by RunCrash as a child process")
	}
	ctx := context.Background()
	s, err := open(ctx)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	ack := func(id string) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(out, "ack %s\n", id); err != nil {
			return err
		}
		return out.Flush() // written before the next Update, so the parent sees every ack
	}
	const writers = 8
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("r%s-w%d-%d", round, w, i)
				err := s.Update(ctx, func(tx store.Tx) error {
					_, err := tx.Append(ctx, store.NewEvent{Project: crashProject, ID: id, Type: "test.appended",
						At: t0, Actor: "system", Data: BenchData})
					return err
				})
				if err != nil {
					t.Errorf("Update: %v", err)
					return
				}
				if err := ack(id); err != nil {
					t.Errorf("ack: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// RunCrash kills a process writing to the store with 8 writers at once (SIGKILL, after a
// random number of acknowledged events), several rounds on one database, and then checks
// that the log verifies and holds every event whose Update returned nil: a crash in the
// middle of a batch loses no acknowledged event. child is the test that calls
// [CrashChild] (its name, for -test.run); env is added to the child's environment;
// reopen opens the database in this process once the rounds are over.
func RunCrash(t *testing.T, child string, env []string, reopen func(t *testing.T) store.Store) {
	slowtest.Skip(t) // it starts several processes
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	acked := map[string]bool{}
	const rounds = 5
	for round := range rounds {
		killAfter := 20 + rng.IntN(400)
		cmd := exec.Command(os.Args[0], "-test.run", "^"+child+"$", "-test.count", "1")
		cmd.Env = append(append(os.Environ(), env...), fmt.Sprintf("%s=%d", crashChildEnv, round))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		n := 0
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			id, ok := strings.CutPrefix(sc.Text(), "ack ")
			if !ok {
				continue // the test framework's own lines
			}
			acked[id] = true
			if n++; n == killAfter {
				if err := cmd.Process.Kill(); err != nil {
					t.Fatalf("kill: %v", err)
				}
			}
		}
		if _, err := io.Copy(io.Discard, stdout); err != nil {
			t.Logf("drain: %v", err)
		}
		err = cmd.Wait()
		if n < killAfter {
			t.Fatalf("round %d: the writer stopped after %d acknowledgements (%v):\n%s", round, n, err, stderr.String())
		}
	}
	s := reopen(t)
	head, err := s.Verify(t.Context(), crashProject)
	if err != nil {
		t.Fatalf("after %d crashes the chain does not verify: %v", rounds, err)
	}
	have := map[string]bool{}
	for _, e := range allEvents(t, s, crashProject) {
		have[e.ID] = true
	}
	for id := range acked {
		if !have[id] {
			t.Errorf("acknowledged event %s is missing after the crashes", id)
		}
	}
	t.Logf("%d acknowledged events, %d in the log (head %d)", len(acked), len(have), head.Seq)
}
