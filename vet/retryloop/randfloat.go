package retryloop

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
)

// unitFloatToInt reports a conversion to an integer type (time.Duration,
// int64) of a random float in [0, 1) not yet scaled (rand.Float64()), or
// of one scaled by constants to stay strictly between -1 and 1: the
// conversion truncates it to 0, so it randomises nothing.
func (c *checker) unitFloatToInt(to types.Type, arg ast.Expr) bool {
	if b, ok := to.Underlying().(*types.Basic); !ok || b.Info()&types.IsInteger == 0 {
		return false
	}
	if c.unitFloat(arg) {
		return true
	}
	// int(jitter * (rand.Float64()*2 - 1)) with jitter 0.2: a random
	// float, scaled by constants, that stays strictly between -1 and 1.
	lo, hi, random, ok := c.floatRange(arg, 0)
	return ok && random && lo > -1 && hi < 1
}

// unitFloat reports whether e is a call of a rand package's Float64 or
// Float32: a float in [0, 1).
func (c *checker) unitFloat(e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	callee := c.callee(call)
	if callee == nil || !randPkgs[funcPath(callee)] {
		return false
	}
	return callee.Name() == "Float64" || callee.Name() == "Float32"
}

// floatRange returns the closed interval e's value lies in, when e is
// built of constants and random unit floats (taken as [0, 1]) by +, -, *,
// unary minus and division by a constant; random says whether one of
// those floats is in it.
func (c *checker) floatRange(e ast.Expr, depth int) (lo, hi float64, random, ok bool) {
	if depth > 8 {
		return 0, 0, false, false
	}
	e = ast.Unparen(e)
	if tv, found := c.info.Types[e]; found && tv.Value != nil {
		if k := tv.Value.Kind(); k != constant.Int && k != constant.Float {
			return 0, 0, false, false
		}
		v, _ := constant.Float64Val(constant.ToFloat(tv.Value))
		return v, v, false, true
	}
	if c.unitFloat(e) {
		return 0, 1, true, true
	}
	switch e := e.(type) {
	case *ast.UnaryExpr:
		if e.Op == token.SUB {
			l, h, r, ok := c.floatRange(e.X, depth+1)
			return -h, -l, r, ok
		}
	case *ast.BinaryExpr:
		l1, h1, r1, ok1 := c.floatRange(e.X, depth+1)
		l2, h2, r2, ok2 := c.floatRange(e.Y, depth+1)
		if !ok1 || !ok2 {
			return 0, 0, false, false
		}
		r := r1 || r2
		switch e.Op {
		case token.ADD:
			return l1 + l2, h1 + h2, r, true
		case token.SUB:
			return l1 - h2, h1 - l2, r, true
		case token.MUL:
			ps := []float64{l1 * l2, l1 * h2, h1 * l2, h1 * h2}
			return slices.Min(ps), slices.Max(ps), r, true
		case token.QUO:
			if l2 != h2 || l2 == 0 {
				return 0, 0, false, false
			}
			return min(l1/l2, h1/l2), max(l1/l2, h1/l2), r, true
		}
	}
	return 0, 0, false, false
}

// pureHow says, for a nojitter finding, why a pure duration is so: only
// by default, whatever the caller passes, or because its random part is
// truncated to 0.
func (p purity) pureHow() string {
	switch {
	case p.byDefault:
		return " by default (as its configuration's defaults set it)"
	case p.caller:
		return " whatever its caller passes (a duration parameter scaled by counters, never randomised)"
	case p.zeroRand:
		return " (its random part, a float in [0, 1) converted to an integer, is always 0)"
	}
	return ""
}
