package workbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/docketrun/docket/internal/datadir"
)

// StateFile keeps docket start's address and run key across restarts (mode 0600), so
// the printed URL, a bookmark of it and a separately started client keep working.
const StateFile = "start.json"

// DefaultListen is the workbench's address when neither --listen nor an earlier run
// names one.
const DefaultListen = "127.0.0.1:7420"

// state is what StateFile holds.
type state struct {
	Listen string `json:"listen"` // the address the gate listened on, its port resolved
	RunKey string `json:"runKey"`
}

// loadState reads the data dir's StateFile; a missing file is the zero state.
func loadState(dir string) (state, error) {
	var st state
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read %s: %w", StateFile, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return st, fmt.Errorf("%s in the data dir is not docket start's state (%v); remove it to start afresh", StateFile, err)
	}
	return st, nil
}

// saveState writes st into the data dir's StateFile, mode 0600.
func saveState(dir string, st state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode %s: %w", StateFile, err)
	}
	return datadir.WritePrivate(filepath.Join(dir, StateFile), append(b, '\n'))
}

// address picks where the gate listens: the flag's address, unless it leaves the port to
// the system (or is empty) and an earlier run chose one, which is kept.
func (st state) address(flag string) string {
	if flag == "" {
		if st.Listen != "" {
			return st.Listen
		}
		return DefaultListen
	}
	if _, port, err := net.SplitHostPort(flag); err == nil && port == "0" && st.Listen != "" {
		return st.Listen
	}
	return flag
}
