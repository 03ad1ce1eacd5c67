package summary

import "errors"

// ErrFatal marks summarizer errors that must stop the whole run (bad
// credentials, exhausted quota): retrying other records cannot succeed.
var ErrFatal = errors.New("summarizer: fatal")
