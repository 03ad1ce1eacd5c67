// Package checkfile is the file side of package check: it reads the
// metrics and rules files the gate compares ([Compare], [LoadRules]),
// hashes the files a run's metrics vouch for ([Hash]) and checks that they
// are still those files ([VerifyOutputs], [VerifyRunOutputs]). Package
// check itself, and the metrics and report packages above it, stay pure;
// this is where the gate touches the filesystem.
//
// Errors name the file they concern (and the line, where YAML reports
// one). Nothing here holds state: everything is safe for concurrent use.
package checkfile

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/zeebo/xxh3"

	"github.com/trajcompress/trajcompress/check"
	"github.com/trajcompress/trajcompress/internal/readfile"
	"github.com/trajcompress/trajcompress/metrics"
)

// Compare reads the two metrics files and calls [check.CompareDocuments];
// errors name the file they concern. With verifyOutputs it first checks,
// on the same read of the run's metrics, what [VerifyRunOutputs] checks.
func Compare(baselinePath, runPath string, r check.Rules, verifyOutputs bool) (check.Result, error) {
	var run []byte
	var rdoc check.Document
	if verifyOutputs {
		var err error
		if run, rdoc, err = readRun(runPath); err != nil {
			return check.Result{}, err
		}
		if err := verifyRun(runPath, run); err != nil {
			return check.Result{}, err
		}
	}
	base, err := readfile.Read(baselinePath, "metrics file", readfile.MetricsLimit)
	if err != nil {
		return check.Result{}, fmt.Errorf("check: baseline: %w", err)
	}
	if run == nil {
		if run, err = readfile.Read(runPath, "metrics file", readfile.MetricsLimit); err != nil {
			return check.Result{}, fmt.Errorf("check: run: %w", err)
		}
	}
	bdoc, err := check.ParseDocument(base)
	if err != nil {
		return check.Result{}, fmt.Errorf("check: baseline %s: %w", baselinePath, err)
	}
	if !verifyOutputs {
		if rdoc, err = check.ParseDocument(run); err != nil {
			return check.Result{}, fmt.Errorf("check: run %s: %w", runPath, err)
		}
	}
	res, err := check.CompareDocuments(bdoc, rdoc, r)
	if err != nil {
		return res, fmt.Errorf("%w (baseline %s, run %s)", err, baselinePath, runPath)
	}
	return res, nil
}

// LoadRules reads a YAML rules file (see package check for the layout).
// Unknown keys, a second YAML document, and invalid rules are errors
// naming the file (and the line, where YAML reports one).
func LoadRules(path string) (check.Rules, error) {
	b, err := readfile.Read(path, "rules file", readfile.SmallLimit)
	if err != nil {
		return check.Rules{}, fmt.Errorf("check: rules: %w", err)
	}
	r, err := check.ParseRules(b)
	if err != nil {
		return check.Rules{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// VerifyRunOutputs refuses a run's metrics whose outputs are not the files
// they vouch for (run.outputs: path, size and xxh3-128 of each file the
// run wrote): a metrics file left beside outputs of another run, or
// outputs changed since, would otherwise be gated as if they matched.
// Metrics without run.outputs (dry runs, older versions) pass.
func VerifyRunOutputs(runPath string) error {
	b, _, err := readRun(runPath)
	if err != nil {
		return err
	}
	return verifyRun(runPath, b)
}

// readRun reads and decodes the run's metrics file.
func readRun(runPath string) ([]byte, check.Document, error) {
	b, err := readfile.Read(runPath, "metrics file", readfile.MetricsLimit)
	if err != nil {
		return nil, check.Document{}, fmt.Errorf("check: run: %w", err)
	}
	doc, err := check.ParseDocument(b)
	if err != nil {
		return nil, check.Document{}, fmt.Errorf("check: run %s: %w", runPath, err)
	}
	return b, doc, nil
}

// verifyRun checks the outputs that b, the run's metrics read from
// runPath (a valid document), vouches for.
func verifyRun(runPath string, b []byte) error {
	var doc struct {
		Run struct {
			Outputs []metrics.OutputFile `json:"outputs"`
		} `json:"run"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("check: run %s: %w", runPath, err)
	}
	if err := VerifyOutputs(runPath, doc.Run.Outputs); err != nil {
		return fmt.Errorf("check: %w (pass --no-verify-outputs to compare the figures alone)", err)
	}
	return nil
}

// Hash returns the size and hex xxh3-128 of the file at path, as
// [metrics.OutputFile] records them.
func Hash(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close() //nolint:errcheck // read-only: a close error loses nothing
	h := xxh3.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	b := h.Sum128().Bytes()
	return n, hex.EncodeToString(b[:]), nil
}

// VerifyOutputs checks that the files a metrics document at metricsPath
// vouches for (run.outputs; paths relative to its directory) are there
// with the recorded size and hash. It returns nil for metrics that vouch
// for nothing (dry runs, outputs written to devices, older versions).
func VerifyOutputs(metricsPath string, outputs []metrics.OutputFile) error {
	var errs []error
	dir := filepath.Dir(metricsPath)
	for _, o := range outputs {
		p := filepath.Join(dir, filepath.FromSlash(o.Path))
		n, sum, err := Hash(p)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s names output %s, which cannot be read: %w", metricsPath, p, err))
		case n != o.Bytes || sum != o.XXH3:
			errs = append(errs, fmt.Errorf("%s vouches for %s as %d bytes, xxh3-128 %s, but it has %d bytes, %s: these are not the outputs of that run", metricsPath, p, o.Bytes, o.XXH3, n, sum))
		}
	}
	return errors.Join(errs...)
}
