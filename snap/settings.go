package snap

import (
	"errors"
	"fmt"

	"github.com/trajcompress/trajcompress/traj"
)

// MaxTurnOverhead bounds tokenizer.turn_overhead: chat templates frame a
// turn with a handful of tokens, and a per-turn figure beyond this would
// overflow token totals of long records.
const MaxTurnOverhead = 1 << 20

// ValidateSettings checks the record path's settings that shape what is
// planned (the per-turn framing counted into every turn, and the summary
// turn's role and placement), naming each by its config key: the one place
// they are checked (pipeline's Options.Validate and config.Validate call
// it). An empty role means user.
func ValidateSettings(turnOverhead int, role traj.Role, alternate bool) error {
	var errs []error
	if turnOverhead < 0 || turnOverhead > MaxTurnOverhead {
		errs = append(errs, fmt.Errorf("tokenizer.turn_overhead must be in [0, %d], got %d", MaxTurnOverhead, turnOverhead))
	}
	switch role {
	case "", traj.RoleUser, traj.RoleAssistant, traj.RoleSystem:
	default:
		errs = append(errs, fmt.Errorf("output.summary_role must be user, assistant or system, got %q", role))
	}
	if alternate && role != "" && role != traj.RoleUser {
		errs = append(errs, fmt.Errorf("output.alternation merges the summary into user-side turns: output.summary_role must be user, got %q", role))
	}
	return errors.Join(errs...)
}
