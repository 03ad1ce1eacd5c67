package traj

// Turn is one message of a trajectory.
//
// Raw holds the turn's JSON object exactly as read (a sub-slice of the
// record's bytes); it is nil for turns trajcompress made itself, such as the
// summary. A writer re-emits Raw unchanged unless the turn was modified.
type Turn struct {
	Role Role   // normalised role
	Name string // role as written in the input: "human", "gpt", "observation", …
	Text string // the text that is counted and summarised

	// OpenAI dialect only: the ids of the tool calls an assistant turn makes,
	// and the id of the call a tool turn answers.
	CallIDs   []string
	AnswersID string

	Raw []byte
}
