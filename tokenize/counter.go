package tokenize

// Counter counts the tokens of a text. Implementations are safe for
// concurrent use.
type Counter interface {
	Count(text string) int
}
