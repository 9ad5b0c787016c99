package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/docketrun/docket/internal/worker"
)

// manifestCheck checks the worker's tool manifest as the worker loads it: --manifest, else
// the data dir's tools.json (docket start's) when there is one. A worker keeps the
// manifest it loaded last when an edit does not load and says so only in its log; this is
// where a person sees why, without reading the log (docs/workers.md, "Manifest reload").
func (c *doctorCmd) manifestCheck(dir string) []check {
	path := c.Manifest
	if path == "" {
		path = filepath.Join(dir, "tools.json")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	adapters, closeAdapters := workerAdapters(filepath.Dir(path), nil)
	m, err := worker.LoadManifest(path, adapters)
	if cerr := closeAdapters(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return []check{{Name: "manifest", Detail: fmt.Sprintf("%v; a running worker keeps the manifest it loaded last until the file loads again", err)}}
	}
	return []check{{Name: "manifest", OK: true, Detail: fmt.Sprintf("%s loads: %d tool(s), built-in ones included", path, len(m.IDs()))}}
}
