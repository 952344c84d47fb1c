package retryloop

import (
	"cmp"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
)

// A long-lived value often keeps the context that ends its work in a
// field (ipfs.ctx, cancelled by Shutdown) and its loops listen to it:
//
//	for {
//		select {
//		case <-ipfs.ctx.Done():
//			return
//		default:
//		}
//		if _, err := ipfs.ID(ipfs.ctx); err == nil {
//			break
//		}
//		time.Sleep(time.Second)
//	}
//
// The function has a context to hear and hears it everywhere but in the
// wait: the field is in scope for deafwait as a parameter would be. A
// field the function never reads is left alone: a value may keep a
// context for other methods' sake.

// heardField returns the context field of the receiver or of a parameter
// that the function declaration holding pos listens to itself — asks its
// Done() or Err(), or hands it to a call — as "x.field"; "" if none.
func (c *checker) heardField(pos token.Pos) string {
	fd := c.declAt(pos)
	if fd == nil {
		return ""
	}
	if name, ok := c.heardCtx[fd]; ok {
		return name
	}
	name := ""
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || name != "" {
			return name == ""
		}
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && len(call.Args) == 0 && (sel.Sel.Name == "Done" || sel.Sel.Name == "Err") {
			name = c.paramCtxField(sel.X, fd)
		}
		for _, a := range call.Args {
			if name == "" {
				name = c.paramCtxField(a, fd)
			}
		}
		return name == ""
	})
	c.heardCtx[fd] = name
	return name
}

// declAt returns the function declaration whose body holds pos, or nil,
// by a binary search of the package's declarations in position order.
func (c *checker) declAt(pos token.Pos) *ast.FuncDecl {
	if c.bodies == nil {
		for _, f := range c.pass.Files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					c.bodies = append(c.bodies, fd)
				}
			}
		}
		slices.SortFunc(c.bodies, func(a, b *ast.FuncDecl) int { return cmp.Compare(a.Body.Pos(), b.Body.Pos()) })
	}
	i, _ := slices.BinarySearchFunc(c.bodies, pos, func(fd *ast.FuncDecl, p token.Pos) int {
		if fd.Body.End() <= p {
			return -1
		}
		if fd.Body.Pos() > p {
			return 1
		}
		return 0
	})
	if i < len(c.bodies) && c.bodies[i].Body.Pos() <= pos && pos < c.bodies[i].Body.End() {
		return c.bodies[i]
	}
	return nil
}

// paramCtxField returns "x.f" when e selects a field f of context type
// from x, the receiver or a parameter of fd; "" otherwise.
func (c *checker) paramCtxField(e ast.Expr, fd *ast.FuncDecl) string {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok || !isContext(c.info.TypeOf(sel)) {
		return ""
	}
	if f, ok := c.info.Uses[sel.Sel].(*types.Var); !ok || !f.IsField() {
		return ""
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	if !ok {
		return ""
	}
	v, ok := c.info.Uses[id].(*types.Var)
	if !ok || !(c.params[v] || isRecvOf(v, fd, c.info)) {
		return ""
	}
	return id.Name + "." + sel.Sel.Name
}

// isRecvOf reports whether v is fd's receiver.
func isRecvOf(v *types.Var, fd *ast.FuncDecl, info *types.Info) bool {
	if fd.Recv == nil {
		return false
	}
	for _, fld := range fd.Recv.List {
		for _, name := range fld.Names {
			if info.Defs[name] == v {
				return true
			}
		}
	}
	return false
}
