package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/docketrun/docket/internal/contract"
)

// AddMaterials sends files to the docket start running on the data dir dir, through its
// run-key gate, as materials of agent's conversation ("" for none in particular): the
// bytes go into the material area on this machine, and serve records each file's fact.
// It is what docket material add runs.
func AddMaterials(ctx context.Context, dir, agent, conversation string, files []string) ([]contract.Material, error) {
	if len(files) == 0 || len(files) > MaxMaterialFiles {
		return nil, contract.Errorf(contract.CodeInvalidArgument, "name 1 to %d files to add.", MaxMaterialFiles)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, contract.Errorf(contract.CodeMaterialInvalid, "%s cannot be read (%v); name a file that is there.", f, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, contract.Errorf(contract.CodeMaterialInvalid, "%s is not a regular file; name files, not directories.", f)
		}
	}
	raw, err := URL(dir)
	if err != nil {
		return nil, contract.Errorf(contract.CodeInvalidArgument, "%v; the files go to the machine docket start runs on, through it.", err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("docket start's URL: %w", err)
	}
	key := u.Query().Get("key")
	u.RawQuery, u.Path = "", MaterialsPath

	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		pw.CloseWithError(writeMaterials(mw, agent, conversation, files))
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), pr)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set(runKeyHeader, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("send the files to docket start at %s: %w", u.Host, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read docket start's answer: %w", err)
	}
	if resp.StatusCode != http.StatusCreated {
		var ce contract.Error
		if json.Unmarshal(b, &ce) == nil && ce.Code != "" {
			return nil, &ce
		}
		return nil, fmt.Errorf("docket start answered %s", resp.Status)
	}
	var ans materialsAnswer
	if err := json.Unmarshal(b, &ans); err != nil {
		return nil, fmt.Errorf("docket start's answer: %w", err)
	}
	return ans.Materials, nil
}

func writeMaterials(mw *multipart.Writer, agent, conversation string, files []string) error {
	if err := mw.WriteField("agent", agent); err != nil {
		return err
	}
	if conversation != "" {
		if err := mw.WriteField("conversation", conversation); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := copyFile(mw, f); err != nil {
			return err
		}
	}
	return mw.Close()
}

func copyFile(mw *multipart.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := mw.CreateFormFile("files", filepath.Base(path))
	if err != nil {
		return err
	}
	_, err = io.Copy(w, f)
	return err
}
