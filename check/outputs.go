package check

import (
	"encoding/json"
	"fmt"

	"github.com/trajcompress/trajcompress/internal/readfile"
	"github.com/trajcompress/trajcompress/metrics"
)

// VerifyRunOutputs refuses a run's metrics whose outputs are not the files
// they vouch for (run.outputs: path, size and xxh3-128 of each file the
// run wrote): a metrics file left beside outputs of another run, or
// outputs changed since, would otherwise be gated as if they matched.
// Metrics without run.outputs (dry runs, older versions) pass.
func VerifyRunOutputs(runPath string) error {
	b, err := readfile.Read(runPath, "metrics file", readfile.MetricsLimit)
	if err != nil {
		return fmt.Errorf("check: run: %w", err)
	}
	var doc struct {
		Run struct {
			Outputs []metrics.OutputFile `json:"outputs"`
		} `json:"run"`
	}
	if _, err := decode(b); err != nil {
		return fmt.Errorf("check: run %s: %w", runPath, err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("check: run %s: %w", runPath, err)
	}
	if err := metrics.VerifyOutputs(runPath, doc.Run.Outputs); err != nil {
		return fmt.Errorf("check: %w (pass --no-verify-outputs to compare the figures alone)", err)
	}
	return nil
}
