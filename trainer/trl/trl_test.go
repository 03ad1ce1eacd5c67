package trl

import (
	"errors"
	"strings"
	"testing"
)

func TestTrainingTemplate(t *testing.T) {
	got, name, err := TrainingTemplate(qwen3)
	if err != nil || got != qwen3Training || !strings.HasSuffix(name, "qwen3_training.jinja") {
		t.Fatalf("qwen3: %q %v", name, err)
	}
	// A template with generation markers is kept; another is refused.
	if got, _, err := TrainingTemplate(qwen3Training); err != nil || got != qwen3Training {
		t.Errorf("marked template: %v", err)
	}
	if _, _, err := TrainingTemplate(qwen3 + " "); !errors.Is(err, ErrNoTrainingTemplate) {
		t.Errorf("unknown template: %v", err)
	}
}
