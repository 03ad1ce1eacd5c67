// Package snap is the pure planning core of trajcompress: given the roles and
// token counts of a trajectory's turns and a [Budget], [Compute] decides
// whether the trajectory is left alone, cannot be compressed (and why), or
// which half-open region [Plan.Start, Plan.End) of turns is to be replaced by
// one summary turn. In alternation mode [PlaceAlternating] then decides how
// the summary joins its neighbours ([Placement]), moving the region's end by
// one turn or refusing the record when strict user/assistant order cannot be
// kept. [Settle] turns the recount after assembly into the final outcome,
// and [CheckPairing] verifies id-based tool pairing of assembled OpenAI-style
// records. Outcomes and reasons are the vocabulary of package outcome.
//
// The rule implemented is docs/planning.md, rules 1–11, exactly:
// the protected head is the prefix ending at the last enabled first-of-role
// turn, the protected tail is the last [Budget.LastN] turns, region
// boundaries never separate a tool result from the assistant turn that
// called it, and a region whose tokens do not exceed the summary size is
// refused (net-savings guard).
//
// Contract:
//   - Pure: no I/O, no context, no goroutines, no package state; it imports
//     only the standard library, outcome and traj. Every function is safe for
//     concurrent use and deterministic.
//   - Inputs are only read, never retained or modified.
//   - [Compute] and [PlaceAlternating] (given a plan of Compute for the same
//     inputs) never panic for equal-length inputs and any [Budget], valid or
//     not (an invalid budget gives a well-defined but meaningless plan; call
//     [Budget.Validate] first). They panic if len(roles) != len(tok), which
//     is a programming error.
//   - [Budget.Validate] returns an error wrapping [ErrInvalidBudget] that
//     names the offending YAML key (for example
//     protected_turns.last_n_turns).
package snap
