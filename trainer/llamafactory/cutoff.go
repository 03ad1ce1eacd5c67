package llamafactory

// InferSeqlen is processor_utils.infer_seqlen: the lengths a source and a
// target of sourceLen and targetLen tokens are cut to for a budget of
// cutoffLen tokens.
func InferSeqlen(sourceLen, targetLen, cutoffLen int) (int, int) {
	var maxTarget int
	switch {
	case targetLen*2 < cutoffLen: // truncate source
		maxTarget = cutoffLen
	case sourceLen*2 < cutoffLen: // truncate target
		maxTarget = cutoffLen - sourceLen
	case sourceLen+targetLen == 0: // Python raises ZeroDivisionError; no caller gets here
		maxTarget = 0
	default: // truncate both
		maxTarget = int(float64(cutoffLen) * (float64(targetLen) / float64(sourceLen+targetLen)))
	}
	newTarget := min(maxTarget, targetLen)
	maxSource := max(cutoffLen-newTarget, 0)
	newSource := min(maxSource, sourceLen)
	return newSource, newTarget
}

// PairCut is what the cutoff keeps of one pair.
type PairCut struct {
	Source, Target int // tokens kept
	Reached        bool
}

// Cut is supervised.py's cutoff applied to a row.
type Cut struct {
	// Length is len(input_ids): the tokens kept, with the final eos under
	// efficient_eos.
	Length int
	// Pairs has the row's pairs in their order (not the visiting order).
	Pairs []PairCut
	// Cut lists the pairs shortened (some tokens kept, some lost); Dropped
	// the pairs nothing is kept of (not reached, or cut to nothing).
	Cut, Dropped []int
	// TokensLost are the tokens cut away, TargetLost those of them that
	// were in targets (trained, except under mask_history, where only the
	// last pair's target is).
	TokensLost, TargetLost int
	// Trained is the tokens whose label is not IGNORE_INDEX: the kept
	// targets (only the last pair's under mask_history), the kept sources
	// under train_on_prompt, and under efficient_eos the eos label each
	// pair after the first carries in its source and the final eos.
	Trained int
	// TurnsLost counts the turns none of whose tokens are kept, TurnsCut
	// the turns of which only a part is (a pair's source stands for the
	// turns before its response, its target for the response turn).
	TurnsLost, TurnsCut int
}

// Cutoff applies _encode_data_example's loop to row for cutoff_len
// cutoffLen, with the renderer's mask_history (the pairs visited
// last-first, only the last one trained) and train_on_prompt. A skipped
// row gives the zero Cut.
func (r *Renderer) Cutoff(row Row, cutoffLen int) Cut {
	maskHistory := r.opts.MaskHistory
	var c Cut
	if row.Skip != nil {
		return c
	}
	c.Pairs = make([]PairCut, len(row.Pairs))
	total := 0
	if row.EfficientEOS {
		total = 1
	}
	for k := range row.Pairs {
		i := k
		if maskHistory {
			i = len(row.Pairs) - 1 - k
		}
		if total >= cutoffLen {
			break
		}
		p := row.Pairs[i]
		s, t := InferSeqlen(p.Source, p.Target, cutoffLen-total)
		c.Pairs[i] = PairCut{Source: s, Target: t, Reached: true}
		total += s + t
		switch {
		case r.opts.TrainOnPrompt:
			c.Trained += s
		case row.EfficientEOS && k != 0:
			c.Trained++ // [eos] + [IGNORE_INDEX] * (source_len - 1)
		}
		if !maskHistory || k == 0 {
			c.Trained += t
		}
	}
	if row.EfficientEOS {
		c.Trained++
	}
	c.Length = total
	for i, p := range row.Pairs {
		k := c.Pairs[i]
		lost := p.Source - k.Source + p.Target - k.Target
		c.TokensLost += lost
		c.TargetLost += p.Target - k.Target
		switch {
		case k.Source+k.Target == 0 && p.Source+p.Target > 0:
			c.Dropped = append(c.Dropped, i)
		case lost > 0:
			c.Cut = append(c.Cut, i)
		}
		srcTurns := p.End - p.First - 1
		if srcTurns < 1 {
			srcTurns = 1
		}
		for _, part := range [][3]int{{p.Source, k.Source, srcTurns}, {p.Target, k.Target, 1}} {
			switch {
			case part[0] > 0 && part[1] == 0:
				c.TurnsLost += part[2]
			case part[1] < part[0]:
				c.TurnsCut++
			}
		}
	}
	return c
}
