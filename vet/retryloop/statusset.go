package retryloop

import (
	"go/ast"
	"go/constant"
	"go/types"
)

// A loop often retries the statuses in a set: retryOn[resp.StatusCode],
// slices.Contains(codes, status). The set is read from the values the
// package gives it — a literal where it stands, in a variable, or as a
// configuration field's default (c.retryOn = map[int]bool{502: true, …}).
// Values out of sight (an option's make and loop, a parameter) are the
// user's settings and leave the default to decide; a set with no literal
// in sight is a classification the analyzer cannot see into.

// statusSetOf returns the statuses in the set e names (a map or a slice),
// and whether any literal was found for it.
func (c *checker) statusSetOf(e ast.Expr, body *ast.BlockStmt, depth int) (map[int64]bool, bool) {
	if depth > 4 || e == nil || e == unknownExpr {
		return nil, false
	}
	var from []fieldValue
	switch x := ast.Unparen(e).(type) {
	case *ast.CompositeLit:
		return c.setLit(x)
	case *ast.Ident:
		v, ok := c.info.Uses[x].(*types.Var)
		if !ok || c.params[v] {
			return nil, false
		}
		if isPkgVar(v) {
			init, ok := c.pkgVars[v]
			if !ok {
				return nil, false
			}
			return c.statusSetOf(init, nil, depth+1)
		}
		for _, a := range c.assignsOf(body)[v] {
			from = append(from, fieldValue{a, body})
		}
	case *ast.SelectorExpr:
		v, ok := c.info.Uses[x.Sel].(*types.Var)
		if !ok {
			return nil, false
		}
		if !v.IsField() {
			if init, ok := c.pkgVars[v]; ok {
				return c.statusSetOf(init, nil, depth+1)
			}
			return nil, false
		}
		from = c.fieldValues[v]
	default:
		return nil, false
	}
	out, found := map[int64]bool{}, false
	for _, fv := range from {
		if s, ok := c.statusSetOf(fv.expr, fv.body, depth+1); ok {
			found = true
			for k, in := range s {
				out[k] = out[k] || in
			}
		}
	}
	return out, found
}

// setLit reads a map or slice literal of statuses: a map's keys whose
// value is true (or any value but a bool), a slice's elements.
func (c *checker) setLit(lit *ast.CompositeLit) (map[int64]bool, bool) {
	t := c.info.TypeOf(lit)
	if t == nil {
		return nil, false
	}
	out := map[int64]bool{}
	switch u := t.Underlying().(type) {
	case *types.Map:
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				return nil, false
			}
			k, ok := c.constIntOf(kv.Key)
			if !ok {
				return nil, false
			}
			in := true
			if isBool(u.Elem()) {
				tv, ok := c.info.Types[kv.Value]
				in = ok && tv.Value != nil && tv.Value.Kind() == constant.Bool && constant.BoolVal(tv.Value)
			}
			out[k] = in
		}
	case *types.Slice, *types.Array:
		for _, el := range lit.Elts {
			k, ok := c.constIntOf(el)
			if !ok {
				return nil, false
			}
			out[k] = true
		}
	default:
		return nil, false
	}
	return out, true
}

func (c *checker) constIntOf(e ast.Expr) (int64, bool) {
	tv, ok := c.info.Types[e]
	if !ok || tv.Value == nil {
		return 0, false
	}
	return constInt(tv.Value.ExactString())
}

// statusLookup recognises a membership test of a status in a set:
// set[status] or slices.Contains(set, status). It returns the set and
// the status.
func (c *checker) statusLookup(e ast.Expr) (set, status ast.Expr, ok bool) {
	switch x := ast.Unparen(e).(type) {
	case *ast.IndexExpr:
		if _, isMap := typeUnder(c.info.TypeOf(x.X)).(*types.Map); isMap {
			return x.X, x.Index, true
		}
	case *ast.CallExpr:
		if isFunc(c.callee(x), "slices", "Contains") && len(x.Args) == 2 {
			return x.Args[0], x.Args[1], true
		}
	}
	return nil, nil, false
}

func typeUnder(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	return t.Underlying()
}

// evalLookup evaluates a status-set membership on outcome o, the status
// given by statusVal.
func (c *checker) evalLookup(set ast.Expr, body *ast.BlockStmt, o outcome, status int64, known bool) tri {
	if !known {
		return triU
	}
	s, ok := c.statusSetOf(set, body, 0)
	if !ok {
		return triU
	}
	return boolTri(s[status])
}
