package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/jsontest"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/traj"
)

// FuzzSummarySplice: the record a summary is spliced into (the summary
// turn in place of the region's turns, or merged into a neighbour, the
// notice on the head's system turns or on the system prompt outside them)
// is valid JSON, and every turn kept is the turn read, of the same
// structure recursively into the strings that hold JSON, but for the text
// the splice adds to it by design.
func FuzzSummarySplice(f *testing.F) {
	// Records of 8 turns or more: a region to replace.
	lines, err := testenv.RealLines(64<<10, 2, func(l []byte) bool {
		r, err := traj.Decode(l, pos, traj.Schema{})
		return err == nil && len(r.Turns) >= 8
	})
	if err != nil {
		f.Fatal(err)
	}
	for i, l := range lines {
		// A target of about a third of the line's words: a region to replace.
		target := uint16(min(len(strings.Fields(string(l)))/3, 1<<16-1))
		f.Add(l, "[CONTEXT SUMMARY]: s \"q\" \\ \u2028", target, uint8(1), uint8(i))
		f.Add(l, "{\"json\": \"summary\"}", target, uint8(2), uint8(i+3|128))
	}
	long := words(200, "w")
	for i, tr := range jsontest.Tricky() {
		if !utf8.ValidString(tr) {
			continue
		}
		q, _ := json.Marshal(tr)
		qq, _ := json.Marshal(string(q))
		f.Add([]byte(`{"system": `+string(q)+`, "conversations": [{"from": "human", "value": `+string(q)+`}, {"from": "gpt", "value": "`+long+`"}, `+
			`{"from": "tool", "value": `+string(qq)+`}, {"from": "gpt", "value": "`+long+`"}, {"from": "human", "value": `+string(q)+`}]}`),
			"sum "+tr, uint16(50), uint8(1), uint8(i|16|32|64))
		f.Add([]byte(`{"messages":[{"role":"system","content":`+string(q)+`},{"role":"user","content":[{"type":"text","text":`+string(q)+`}]},`+
			`{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":`+string(q)+`}}]},`+
			`{"role":"tool","tool_call_id":"a","content":"`+long+`"},{"role":"assistant","content":`+string(q)+`},{"role":"user","content":`+string(qq)+`},`+
			`{"role":"assistant","content":"ok"}]}`), tr, uint16(40), uint8(1), uint8((i+3)|16|32|64))
	}
	f.Fuzz(func(t *testing.T, line []byte, text string, target uint16, lastN, flags uint8) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		if strings.TrimSpace(text) == "" {
			return
		}
		notice := " NOTICE"
		if flags&8 != 0 {
			notice = DefaultNotice
		}
		c := newComp(t, func(o *Options) {
			// A target over the summary's size, or NewCompressor refuses it.
			o.Budget = snap.Budget{Target: 21 + int(target), SummaryTokens: 20, LastN: int(lastN % 8),
				ProtectFirstSystem: flags&16 == 0, ProtectFirstUser: true, ProtectFirstAssistant: flags&32 == 0, ProtectFirstTool: flags&64 == 0}
			o.Summarizing.Summarizer = &fixedSummarizer{text: text}
			o.Placement.AddNotice = flags&1 != 0
			o.Placement.NoticeText = notice
			o.PerRecordMetrics = flags&128 != 0
			o.Placement.Alternate = flags&2 != 0
			if !o.Placement.Alternate && flags&4 != 0 {
				o.Placement.Role = traj.RoleAssistant
			}
		})
		res, err := c.Compress(context.Background(), line, pos)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reject != nil {
			return
		}
		in, _ := jsonx.RepairUTF8(line)
		if err := checkSplice(in, res, text, notice, flags&128 != 0); err != nil {
			t.Fatalf("%v\nin:  %.3000s\nout: %.3000s", err, in, res.Out)
		}
	})
}

// checkSplice checks res.Out against in, the record read.
func checkSplice(in []byte, res Result, text, notice string, perRecord bool) error {
	rec, err := traj.Decode(in, pos, traj.Schema{})
	if err != nil {
		return fmt.Errorf("the input does not decode: %v", err)
	}
	turnsKey, contKey := "conversations", "value"
	if rec.Dialect == traj.DialectOpenAI {
		turnsKey, contKey = "messages", "content"
	}
	n := len(rec.Turns)
	s, e := n, n
	if r := res.Obs.Region; r != nil {
		s, e = r[0], r[1]
	}
	inTurns, _ := rec.Field(turnsKey)
	// The record but its turns (checked below) and its metrics.
	var top jsontest.Options
	top = jsontest.Options{
		Leaf: func(p jsontest.Path, a, b string) error {
			if p.Is(rec.SystemKey) && b == a+notice {
				return nil
			}
			return fmt.Errorf("changed: %.200q → %.200q", a, b)
		},
		Replaced: func(p jsontest.Path, a, b []byte) error {
			if p.HasPrefix(turnsKey) || p.Is(metrics.TrajectoryKey) && b[0] == '{' {
				return nil
			}
			if len(p) == 0 && perRecord {
				// The metrics, added as the last member.
				ma, _, _ := jsonx.Members(a, 0)
				mb, end, _ := jsonx.Members(b, 0)
				if len(mb) == len(ma)+1 && len(ma) > 0 && jsonx.KeyIs(mb[len(ma)].Key, metrics.TrajectoryKey) && b[mb[len(ma)].Start] == '{' {
					return jsontest.Compare(a, append(b[:mb[len(ma)-1].End:mb[len(ma)-1].End], b[end:]...), top)
				}
			}
			if p.Is(rec.SystemKey) {
				var sb string
				if json.Unmarshal(b, &sb) == nil && sb == rec.System+notice {
					return nil
				}
			}
			return fmt.Errorf("not replaceable")
		},
	}
	if err := jsontest.Compare(in, res.Out, top); err != nil {
		return err
	}
	out, err := traj.Decode(res.Out, pos, traj.Schema{})
	if err != nil {
		return fmt.Errorf("the output does not decode: %v", err)
	}
	b, _ := out.Field(turnsKey)
	{
		{
			ins := jsonx.Elements(inTurns, 0)
			outs := jsonx.Elements(b, 0)
			added := len(outs) - (s + n - e)
			if added < 0 || added > 1 || added == 1 && s >= e {
				return fmt.Errorf("%d turns written for region [%d, %d) of %d", len(outs), s, e, n)
			}
			for i, o := range outs {
				var k int
				var adds []string // what the splice may have added to turn k
				switch {
				case i < s:
					k = i
					if rec.Turns[k].Role == traj.RoleSystem {
						adds = append(adds, notice)
					}
					if i == s-1 && added == 0 && s < e {
						adds = append(adds, "\n\n"+text, notice+"\n\n"+text)
					}
				case i == s && added == 1:
					if err := summaryTurn(rec, b[o[0]:o[1]], text); err != nil {
						return fmt.Errorf("summary turn %d: %v", i, err)
					}
					continue
				default:
					k = i - s - added + e
					if i == s && added == 0 && s < e {
						adds = append(adds, "-"+text+"\n\n") // prepended
					}
				}
				if err := jsontest.Compare(inTurns[ins[k][0]:ins[k][1]], b[o[0]:o[1]], turnOptions(contKey, adds)); err != nil {
					return fmt.Errorf("turn %d (input turn %d): %v", i, k, err)
				}
			}
		}
	}
	return nil
}

// turnOptions allow one of adds (appended, or prepended when it starts
// with "-") to a turn's text: a string, a null, a list of parts (as more
// text parts) or an absent content.
func turnOptions(contKey string, adds []string) jsontest.Options {
	edited := func(a, b string) error {
		for _, x := range adds {
			if p, ok := strings.CutPrefix(x, "-"); ok && b == p+a || b == a+x {
				return nil
			}
		}
		return fmt.Errorf("text %.200q became %.200q, not with one of %q added", a, b, adds)
	}
	return jsontest.Options{
		Leaf: func(p jsontest.Path, a, b string) error {
			if p.Is(contKey) {
				return edited(a, b)
			}
			return fmt.Errorf("changed")
		},
		Replaced: func(p jsontest.Path, a, b []byte) error {
			switch {
			case p.Is(contKey) && (a[0] == '"' || a[0] == 'n') && b[0] == '"':
				sa, _ := jsonx.Unquote(a)
				sb, _ := jsonx.Unquote(b)
				return edited(sa, sb)
			case p.Is(contKey) && a[0] == '[' && b[0] == '[':
				ea, eb := jsonx.Elements(a, 0), jsonx.Elements(b, 0)
				for off := 0; off <= 1; off++ { // parts appended, or one prepended
					extra := len(eb) - len(ea)
					lo := 0
					if off == 1 {
						lo = extra
					}
					ok := extra >= 1 && extra <= 2
					for k := 0; ok && k < len(ea); k++ {
						ok = jsontest.Unchanged(a[ea[k][0]:ea[k][1]], b[eb[lo+k][0]:eb[lo+k][1]]) == nil
					}
					if !ok {
						continue
					}
					var add strings.Builder
					parts := eb[len(ea):]
					if off == 1 {
						parts = eb[:extra]
					}
					for _, pt := range parts {
						// The text under "text", or "value" where the
						// list's parts hold theirs so (traj.AppendText).
						var part struct{ Type, Text, Value string }
						if json.Unmarshal(b[pt[0]:pt[1]], &part) != nil || part.Type != "text" {
							ok = false
						}
						add.WriteString(part.Text + part.Value)
					}
					if ok {
						x := add.String()
						if off == 1 {
							x = "-" + x
						}
						for _, y := range adds {
							if x == y {
								return nil
							}
						}
					}
				}
				return fmt.Errorf("content list %.200s became %.200s", a, b)
			case len(p) == 0 && a[0] == '{' && b[0] == '{':
				// An absent content, added.
				ma, _, _ := jsonx.Members(a, 0)
				mb, _, _ := jsonx.Members(b, 0)
				if len(mb) == len(ma)+1 && jsonx.KeyIs(mb[len(ma)].Key, contKey) {
					for k := range ma {
						if !jsonx.KeyIs(mb[k].Key, string(must(jsonx.Unquote(ma[k].Key)))) ||
							jsontest.Unchanged(a[ma[k].Start:ma[k].End], b[mb[k].Start:mb[k].End]) != nil {
							return fmt.Errorf("member %d changed", k)
						}
					}
					sb, _ := jsonx.Unquote(b[mb[len(ma)].Start:mb[len(ma)].End])
					return edited("", sb)
				}
			}
			return fmt.Errorf("not replaceable")
		},
	}
}

func must(s string, _ bool) string { return s }

// summaryTurn checks the inserted turn: an object of a role and the
// summary text, in the record's dialect.
func summaryTurn(rec *traj.Record, b []byte, text string) error {
	ms, _, err := jsonx.Members(b, 0)
	if err != nil || len(ms) != 2 {
		return fmt.Errorf("not an object of 2 members: %.200s", b)
	}
	role, _ := jsonx.Unquote(b[ms[0].Start:ms[0].End])
	got, _ := jsonx.Unquote(b[ms[1].Start:ms[1].End])
	if b[ms[0].Start] != '"' || role == "" || b[ms[1].Start] != '"' || got != text {
		return fmt.Errorf("%.200s: want a role and the text %.200q", b, text)
	}
	return nil
}
