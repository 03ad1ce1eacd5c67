package snap

import (
	"errors"
	"fmt"
)

// ErrInvalidBudget is wrapped by every error [Budget.Validate] returns.
var ErrInvalidBudget = errors.New("snap: invalid budget")

// Budget holds the planning parameters of docs/planning.md. The YAML keys (the
// peer's names) are given per field.
type Budget struct {
	// Target is compression.target_max_tokens: a trajectory of at most
	// Target tokens is left alone. Must be > 0.
	Target int
	// SummaryTokens is compression.summary_target_tokens (S): the size the
	// summary turn is budgeted at. Must be >= 0.
	SummaryTokens int
	// LastN is protected_turns.last_n_turns: the last LastN turns are never
	// compressed. Must be >= 0.
	LastN int

	// ProtectFirst* are protected_turns.first_system, first_human, first_gpt
	// and first_tool: when set, the first turn of that role (and so every
	// turn before it) is kept verbatim.
	ProtectFirstSystem, ProtectFirstUser, ProtectFirstAssistant, ProtectFirstTool bool

	// Reserve is what assembling a compressed record adds besides the
	// summary's own SummaryTokens: the summary turn's chat-template framing
	// and the notice appended to the head's system turns. It is not a
	// setting: the pipeline measures it per record, so that the region is
	// sized for everything the output will hold (Need includes it). Must
	// be >= 0.
	Reserve int
}

// DefaultBudget returns the defaults of docs/planning.md (the peer's dataclass
// defaults): target 15250, summary 750, last 4 turns protected, all four
// first-of-role protections on.
func DefaultBudget() Budget {
	return Budget{
		Target:                15250,
		SummaryTokens:         750,
		LastN:                 4,
		ProtectFirstSystem:    true,
		ProtectFirstUser:      true,
		ProtectFirstAssistant: true,
		ProtectFirstTool:      true,
	}
}

// Validate reports every out-of-range field of b, naming each by its YAML
// key; each error matches [ErrInvalidBudget] with errors.Is. It is nil
// when b is usable. config.Validate uses it: this is the one place these
// settings are checked.
func (b Budget) Validate() error {
	var errs []error
	if b.Target <= 0 {
		errs = append(errs, budgetError(fmt.Sprintf("compression.target_max_tokens must be > 0, got %d", b.Target)))
	}
	if b.Reserve < 0 {
		errs = append(errs, budgetError(fmt.Sprintf("reserve must be >= 0, got %d", b.Reserve)))
	}
	if b.SummaryTokens < 0 {
		errs = append(errs, budgetError(fmt.Sprintf("compression.summary_target_tokens must be >= 0, got %d", b.SummaryTokens)))
	}
	if b.Target > 0 && b.SummaryTokens >= b.Target {
		errs = append(errs, budgetError(fmt.Sprintf("compression.summary_target_tokens (%d) must be below compression.target_max_tokens (%d): a summary that large can never make a record fit", b.SummaryTokens, b.Target)))
	}
	if b.LastN < 0 {
		errs = append(errs, budgetError(fmt.Sprintf("protected_turns.last_n_turns must be >= 0, got %d", b.LastN)))
	}
	return errors.Join(errs...)
}

// budgetError is one out-of-range field: its text is the field's message,
// and errors.Is(err, ErrInvalidBudget) holds.
type budgetError string

func (e budgetError) Error() string        { return string(e) }
func (e budgetError) Is(target error) bool { return target == ErrInvalidBudget }
