package imagetok

import (
	"errors"
	"fmt"
)

// A Loader reads one model family's rule from a Hugging Face model's
// preprocessor_config.json. Parse returns an error that is an
// [ErrUnknownProcessor] (errors.Is) for a config of another family's
// processor, so that [ParseAuto] tries the next loader; any other error
// is the config's fault (a field out of range) and ends the search.
type Loader struct {
	Name  string // the family, for messages: "Qwen2-VL"
	Parse func(preprocessorConfig []byte) (Rule, error)
}

// ErrUnknownProcessor is what [ParseAuto] returns (errors.Is) for a
// preprocessor_config.json no loader of [Loaders] reads: the caller falls
// back to a rule of its choosing (package job/jobcore: OpenAI's, with a
// note).
var ErrUnknownProcessor = errors.New("imagetok: no loader reads this image processor config")

// notProcessor is a loader's "not my family's config" error: an
// [ErrUnknownProcessor] with the loader's own text.
type notProcessor string

func (e notProcessor) Error() string        { return string(e) }
func (e notProcessor) Is(target error) bool { return target == ErrUnknownProcessor }

// Loaders are the loaders [ParseAuto] tries, in order. A new family's
// rule read from the model's files is one more entry here (and its
// parser's tests; TestLoadersRefuseOthers checks that each loader refuses
// the others' configs as an ErrUnknownProcessor).
func Loaders() []Loader {
	return []Loader{
		{Name: "Qwen2-VL", Parse: func(b []byte) (Rule, error) {
			q, err := ParseQwen(b)
			if err != nil {
				return nil, err
			}
			return q.Rule(), nil
		}},
	}
}

// ParseAuto reads the rule of the model whose preprocessor_config.json is
// b: the first of [Loaders] that reads it. When none does, the error is an
// [ErrUnknownProcessor] holding each loader's refusal (one loader's
// refusal as it is).
func ParseAuto(b []byte) (Rule, error) {
	var refusals []error
	for _, l := range Loaders() {
		r, err := l.Parse(b)
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, ErrUnknownProcessor) {
			return nil, err
		}
		refusals = append(refusals, err)
	}
	if len(refusals) == 1 {
		return nil, refusals[0]
	}
	return nil, fmt.Errorf("%w: %w", ErrUnknownProcessor, errors.Join(refusals...))
}
