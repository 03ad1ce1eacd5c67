// Package check is the savings gate behind `trajcompress check`: it compares
// the aggregate metrics JSON of a run against a committed baseline and says,
// metric by metric, whether the run regressed beyond its tolerance.
//
// # Metrics documents
//
// Both documents are decoded generically (into map[string]any with
// json.Number), and every value is addressed by a dotted path such as
// "tokens.overall_compression_ratio" or "outcomes.failed_to_fit", so new
// keys added to the metrics layout never break the gate. The processing.*
// section (start_time, end_time, duration_seconds) is never compared: it is
// the only part of a metrics document that varies between two runs of the
// same inputs, and a rule that names it is rejected.
//
// # Rules
//
// A [Rule] bounds the change run − baseline of one numeric value:
// MaxIncrease and MaxDecrease are absolute limits (or fractions of the
// baseline when Relative is set); Exact demands equality and also works for
// strings and booleans. [DefaultRules] builds the gate the CLI flags describe:
// the compression ratio (after/before, so higher is worse) may rise by at most
// --max-ratio-regression, outcomes.failed_to_fit may rise by at most
// --max-failed-to-fit-increase, outcomes.records_rejected, outcomes.invalid and
// summary.trajectories_failed may not rise at all, and outcomes.records_in
// must be equal. [RetentionRules] adds bounds on what summaries keep
// (retention.tool_names.rate and retention.paths_commands.rate): each may
// fall by a limit from the baseline's when the baseline has it (Optional),
// and may not be under a floor (Min) when one is given. [LoadRules] reads
// the same thing from a small YAML file:
//
//	allow_different_setup: false
//	rules:
//	  - path: tokens.overall_compression_ratio
//	    max_increase: 0.01
//	  - path: tokens.total_saved
//	    max_decrease: 0.02
//	    relative: true
//	  - path: outcomes.records_in
//	    exact: true
//	  - path: retention.paths_commands.rate
//	    min: 0.9
//
// Unknown keys are errors naming the key and its line. Limits are compared
// with a tolerance of 1e-9 relative to the magnitudes involved, so a ratio
// that moves by exactly the allowed 0.01 passes despite binary rounding.
//
// # Setup
//
// Two runs are comparable only when run.tokenizer, run.tokenizer_kind,
// run.tokenizer_sha256 (a tokenizer file's hash), run.chat_template_sha256
// (the chat template records were counted with), run.image_tokens (the
// rule images were counted by), run.config_fingerprint,
// run.input_fingerprint and run.dry_run (a dry run is not compared with a
// real one) are equal (a key absent from both documents counts as equal).
// checkfile.VerifyRunOutputs checks, separately, that a run's outputs are
// the files its metrics vouch for. [Compare] returns an error wrapping [ErrSetupDiffers] that lists the
// differing keys unless Rules.AllowDifferentSetup is set, in which case the
// differences are reported in Result.SetupDiffers and the comparison goes on.
//
// # Errors and results
//
// [Compare] returns an error only when it cannot judge: a document that is not
// a JSON object, or a setup mismatch. A value missing from either document, or
// not numeric where a limit needs a number, is a row with status
// [StatusMissing] or [StatusInvalid] and makes Result.Regressed true: the gate
// fails closed. checkfile.Compare reads the two files and adds the file
// name to every error.
//
// The package is pure: no I/O, which is package check/checkfile's (reading
// the metrics and rules files, hashing and verifying the outputs a run's
// metrics vouch for). Nothing here holds state, so everything is safe for
// concurrent use. A [Result] owns its rows; the caller may keep or modify them.
package check
