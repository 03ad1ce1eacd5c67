package traj

// Turn is one message of a trajectory.
//
// Raw holds the turn's JSON object: for a turn as read, a sub-slice of the
// record's bytes; for a turn trajcompress made or changed, fresh bytes in
// the record's dialect and separator style. A writer emits Raw as it is.
// Turns are values; never modify Raw in place, use [Record.NewTurn] and
// [Record.AppendText].
type Turn struct {
	Role Role   // normalised role
	Name string // role as written in the input: "human", "gpt", "observation", …
	Text string // the text that is counted and summarised

	// Extra is the tokens of content that has no text (images), added to
	// the count of Text. [Decode] leaves it 0: the caller that counts
	// images fills it in (package pipeline, by an imagetok rule). A turn
	// with text added ([Record.AppendText], [Record.PrependText]) keeps
	// it; a turn decoded again from edited bytes ([Record.SetContent] and
	// the other edits) has it 0.
	Extra int

	// OpenAI dialect only: the ids of the tool calls an assistant turn makes,
	// and the id of the call a tool turn answers.
	CallIDs   []string
	AnswersID string

	Raw []byte

	content     [2]int // span of the content value inside Raw; [0,0] when absent
	contentKind byte   // 's' string, 'n' null, 'l' list of parts, 0 absent
	made        bool
	calls       []Call // an OpenAI message's "tool_calls" entries, read once by decodeTurn: see Calls
}

// Made reports whether the turn was made or changed by trajcompress, as
// opposed to read verbatim.
func (t Turn) Made() bool { return t.made }

// Content returns the raw JSON of the turn's content value inside Raw, nil when the turn has none.
func (t Turn) Content() []byte {
	if t.contentKind == 0 {
		return nil
	}
	return t.Raw[t.content[0]:t.content[1]]
}
