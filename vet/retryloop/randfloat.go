package retryloop

import (
	"go/ast"
	"go/types"
)

// unitFloatToInt reports a conversion to an integer type (time.Duration,
// int64) of a random float in [0, 1) not yet scaled (rand.Float64()):
// the conversion truncates it to 0, so it randomises nothing.
func (c *checker) unitFloatToInt(to types.Type, arg ast.Expr) bool {
	if b, ok := to.Underlying().(*types.Basic); !ok || b.Info()&types.IsInteger == 0 {
		return false
	}
	call, ok := ast.Unparen(arg).(*ast.CallExpr)
	if !ok {
		return false
	}
	callee := c.callee(call)
	if callee == nil || !randPkgs[funcPath(callee)] {
		return false
	}
	return callee.Name() == "Float64" || callee.Name() == "Float32"
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
