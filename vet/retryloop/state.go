package retryloop

import (
	"go/ast"
	"go/types"
)

// cond is one condition on a path: a boolean expression, a switch case, or
// an opaque choice (a type switch case, a select case).
type cond struct {
	expr   ast.Expr
	tag    ast.Expr   // switch case: tag compared with values
	values []ast.Expr // switch case values, or a tagless case's expressions
	isCase bool
	// typeCase marks a case of a type switch on tag, an error (values
	// are the case's types).
	typeCase bool
	opaque   int // opaqueNone, opaqueClassify, opaqueCtx, opaqueOther
	key      string
	neg      bool
	// skips marks the way past an if that makes the loop's attempt, when
	// nothing but a wait follows it: a path that tried nothing, which says
	// nothing of how the loop treats an outcome.
	skips bool
	// srcs are where the error variables came from where the condition
	// stands: a later assignment does not change what it tested.
	srcs map[types.Object]int
	// alts, if set, make the condition a choice of ways that joined
	// here: it holds if all the conditions of one of them do.
	alts [][]cond
	// joins are the ways of alts that part at one test taken both ways,
	// joined (see complementJoins), made once with them.
	joins [][]cond
}

// flat returns conds with every choice's conditions spread out.
func flat(conds []cond) []cond {
	var out []cond
	for _, c := range conds {
		if c.alts == nil {
			out = append(out, c)
			continue
		}
		for _, a := range c.alts {
			out = append(out, flat(a)...)
		}
	}
	return out
}

const (
	opaqueNone = iota
	opaqueClassify
	opaqueCtx
	opaqueOther
	// opaqueFailed is a select case that receives the error the round's
	// goroutine reports (see receivesGoError): taken on a failure only.
	opaqueFailed
)

// where an error variable's value came from
const (
	srcOutcome = iota // the call the loop is about (the default)
	srcBound          // a wait or the context: it ends the loop, it is not an outcome
	// srcLocal is a local step's error before the loop's remote call
	// (err = rr.Prepare(); … resp, err = s.Do(req)): not an outcome of
	// the call the loop is about, so it may go either way.
	srcLocal
	// srcNil is the error of a call that never fails (see neverFails):
	// nil on every outcome.
	srcNil
)

type state struct {
	conds []cond
	srcs  map[types.Object]int
	// flags are the local booleans this path has set to a constant since
	// the body began (ok = true): a loop whose condition tests one
	// (for !ok && i < n) is left by the path that set it.
	flags map[types.Object]bool
}

func (s state) with(c cond) state {
	c.srcs = s.srcs
	conds := make([]cond, len(s.conds), len(s.conds)+1)
	copy(conds, s.conds)
	return state{conds: append(conds, c), srcs: s.srcs, flags: s.flags}
}

func (s state) setSrc(o types.Object, src int) state {
	m := make(map[types.Object]int, len(s.srcs)+1)
	for k, v := range s.srcs {
		m[k] = v
	}
	m[o] = src
	return state{conds: s.conds, srcs: m, flags: s.flags}
}

// setFlag records that o was given the constant v on this path, or, with
// known false, that what it holds is no longer known.
func (s state) setFlag(o types.Object, v, known bool) state {
	if _, had := s.flags[o]; !had && !known {
		return s
	}
	m := make(map[types.Object]bool, len(s.flags)+1)
	for k, x := range s.flags {
		m[k] = x
	}
	if known {
		m[o] = v
	} else {
		delete(m, o)
	}
	return state{conds: s.conds, srcs: s.srcs, flags: m}
}
