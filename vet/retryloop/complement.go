package retryloop

// complementJoins returns, for every two ways that part at one test,
// taken one way by the first and the other way by the second (P ∧ C ∧ R1
// and P ∧ ¬C ∧ R2), the way P ∧ R1 ∧ R2: wherever it holds, one of the
// two does, whichever way the test goes. A test the analyzer cannot
// decide (errors.Is(err, io.EOF)) then stops mattering when both ways go
// round.
func complementJoins(ways [][]cond) [][]cond {
	var out [][]cond
	for i, a := range ways {
		for _, b := range ways[i+1:] {
			if j, ok := partAt(a, b); ok {
				out = append(out, append(append(append([]cond(nil), a[:j]...), a[j+1:]...), b[j+1:]...))
			}
		}
	}
	return out
}

// complementStates is complementJoins for whole paths, which must also
// agree on the flags they set.
func complementStates(states []state) []state {
	var out []state
	for i, a := range states {
		for _, b := range states[i+1:] {
			if !sameFlags(a, b) {
				continue
			}
			for _, conds := range complementJoins([][]cond{a.conds, b.conds}) {
				out = append(out, state{conds: conds, srcs: a.srcs, flags: a.flags})
			}
		}
	}
	return out
}

func sameFlags(a, b state) bool {
	if len(a.flags) != len(b.flags) {
		return false
	}
	for o, v := range a.flags {
		if w, ok := b.flags[o]; !ok || w != v {
			return false
		}
	}
	return true
}

// partAt returns the index at which a and b part at one test taken both
// ways, after the same conditions before it.
func partAt(a, b []cond) (int, bool) {
	for j := 0; j < len(a) && j < len(b); j++ {
		x, y := a[j], b[j]
		if x.expr == nil || x.expr != y.expr || x.isCase || y.isCase || x.alts != nil || y.alts != nil || x.key != y.key {
			return 0, false
		}
		if x.neg != y.neg {
			return j, true
		}
	}
	return 0, false
}
