package retryloop

import (
	"go/ast"
	"go/types"
)

// A status set is sometimes a map field that functional options fill
// (WithStatusCodeConfig(429, 5, true) storing rc.StatusCodeConfig[code]),
// made empty where the struct is built: the statuses are the keys stored,
// the constants the package passes where a key is a parameter.

// addFieldKey records, for an assignment x.F[k] = r, k as a key the
// package stores in map field F (of a map of bools, only where r is true:
// a key stored false is not in the set; one stored a value out of sight
// makes the set unknown).
func (c *checker) addFieldKey(f *ast.File, l, r ast.Expr) {
	ix, ok := ast.Unparen(l).(*ast.IndexExpr)
	if !ok {
		return
	}
	sel, ok := ast.Unparen(ix.X).(*ast.SelectorExpr)
	if !ok {
		return
	}
	if v, ok := c.info.Uses[sel.Sel].(*types.Var); ok && v.IsField() {
		m, isMap := v.Type().Underlying().(*types.Map)
		if !isMap {
			return
		}
		key := ix.Index
		if isBool(m.Elem()) {
			b, known := c.constBool(r)
			switch {
			case !known:
				key = unknownExpr
			case !b:
				return
			}
		}
		c.fieldKeys[v] = append(c.fieldKeys[v], fieldValue{key, enclosingBody(f, ix.Pos())})
	}
}

// fieldKeySet is the set of keys the package stores in map field v: each
// a constant, or a parameter every caller in the package passes a
// constant. ok is false when v has no stored key, or one is out of sight.
func (c *checker) fieldKeySet(v *types.Var) (map[int64]bool, bool) {
	keys := c.fieldKeys[v]
	if len(keys) == 0 {
		return nil, false
	}
	out := map[int64]bool{}
	for _, k := range keys {
		if n, ok := c.constIntOf(k.expr); ok {
			out[n] = true
			continue
		}
		fn, idx, sites := c.paramSites(k.expr)
		if fn == nil || len(sites) == 0 {
			return nil, false
		}
		for _, s := range sites {
			if idx >= len(s.call.Args) {
				return nil, false
			}
			n, ok := c.constIntOf(s.call.Args[idx])
			if !ok {
				return nil, false
			}
			out[n] = true
		}
	}
	return out, true
}
