package retryloop

import (
	"go/ast"
	"go/types"
)

// A retry helper may take its schedule as a policy, a value of an
// interface type whose method says how long to wait next (holster's
// retry.Until(ctx, backOff, f) waits backOff.Next()). Inside the helper
// that wait is the caller's to choose; at each call, the policy handed in
// is a concrete type whose method's summary says whether it randomises.

// policyParam reports, for a call of m, an interface method whose first
// result is a time.Duration, on a parameter of fn of an interface type
// (backOff.Next() in Until), that parameter's index.
func (c *checker) policyParam(call *ast.CallExpr, m *types.Func, fn *types.Func) (int, bool) {
	if fn == nil || !returnsDuration(m) {
		return 0, false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return 0, false
	}
	v, ok := c.info.Uses[identOf(sel.X)].(*types.Var)
	if !ok || !types.IsInterface(v.Type()) {
		return 0, false
	}
	i, ok := paramIndex(fn, v)
	return i, ok && i < 64
}

// policySched is the schedule of a call of a retry helper that waits
// what its i-th parameter, a policy, says: the policy passed is of a
// concrete type whose methods of the interface's that return a
// time.Duration all return a pure duration (schedPure) or all a random
// one (schedJitter). A policy of an interface type, methods that
// disagree, or one with no summary, leave it unknown.
func (c *checker) policySched(call *ast.CallExpr, callee *types.Func, i int) int {
	params := callee.Type().(*types.Signature).Params()
	if i >= params.Len() || i >= len(call.Args) || call.Ellipsis.IsValid() {
		return schedUnknown
	}
	iface, ok := params.At(i).Type().Underlying().(*types.Interface)
	t := c.info.TypeOf(call.Args[i])
	if !ok || t == nil || types.IsInterface(t) {
		return schedUnknown
	}
	return c.typeSched(t, iface)
}

// typeSched is the schedule a value of the concrete type t gives as a
// policy of the interface iface: its methods of iface's that return a
// time.Duration all return a pure duration (schedPure) or all a random
// one (schedJitter). Methods that disagree, or one with no summary,
// leave it unknown.
func (c *checker) typeSched(t types.Type, iface *types.Interface) int {
	sched := schedUnknown
	for m := range iface.Methods() {
		if !returnsDuration(m) {
			continue
		}
		obj, _, _ := types.LookupFieldOrMethod(t, true, m.Pkg(), m.Name())
		meth, ok := obj.(*types.Func)
		if !ok {
			return schedUnknown
		}
		var s int
		switch f := c.fact(meth); {
		case f == nil:
			return schedUnknown
		case f.Result == jitterNone:
			s = schedPure
		case f.Result == jitterYes:
			s = schedJitter
		default:
			return schedUnknown
		}
		if sched != schedUnknown && s != sched {
			return schedUnknown // the methods disagree: which one is asked is not known here
		}
		sched = s
	}
	return sched
}
