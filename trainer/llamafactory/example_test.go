package llamafactory_test

import (
	"fmt"

	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainer/llamafactory"
	"github.com/trajcompress/trajcompress/traj"
)

// A LLaMA-Factory ShareGPT tool row: qwen3 writes an empty think block into
// both responses; at cutoff_len 60, infer_seqlen cuts the first pair to
// 50 + 10 tokens and the second is never reached.
func Example() {
	line := []byte(`{"conversations": [` +
		`{"from": "human", "value": "Weather in Paris?"},` +
		`{"from": "function_call", "value": "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"},` +
		`{"from": "observation", "value": "{\"temp\": 21}"},` +
		`{"from": "gpt", "value": "It is 21 degrees."}],` +
		`"tools": "[{\"name\": \"get_weather\", \"description\": \"Weather\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}]"}`)
	rec, err := traj.Decode(line, traj.Pos{}, traj.Schema{})
	if err != nil {
		panic(err)
	}
	tok, err := tokenize.New(tokenize.O200kBase) // a model's tokenizer.json in real use
	if err != nil {
		panic(err)
	}
	r, err := llamafactory.New(llamafactory.Options{Template: "qwen3"})
	if err != nil {
		panic(err)
	}
	row := r.Encode(rec, rec.Turns, rec.System, llamafactory.Tokens{Counter: tok})
	for i, p := range row.Pairs {
		fmt.Printf("pair %d: turns [%d, %d), source %d, target %d\n", i, p.First, p.End, p.Source, p.Target)
	}
	cut := r.Cutoff(row, 60)
	fmt.Printf("total %d, kept %d: pairs cut %v, dropped %v, tokens lost %d\n", row.Total(), cut.Length, cut.Cut, cut.Dropped, cut.TokensLost)

	bad, _ := traj.Decode([]byte(`{"conversations": [{"from": "human", "value": "a"}, {"from": "human", "value": "b"}]}`), traj.Pos{}, traj.Schema{})
	fmt.Println("skipped:", r.Skip(bad, bad.Turns, ""))
	// Output:
	// pair 0: turns [0, 2), source 169, target 36
	// pair 1: turns [2, 4), source 35, target 17
	// total 257, kept 60: pairs cut [0], dropped [1], tokens lost 197
	// skipped: invalid_role_tag
}
