package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// A context the function made for itself from context.Background() — a
// dial's timeout, a start-up's group — is not its caller's: a sleep that
// does not hear it misses nothing, unless the function watches it, or
// hands its cancel to a goroutine, or starts the group's goroutines.

// findDetached fills c.detached: context variables every assignment of
// which starts from context.Background() or context.TODO() — a context the
// function made for itself (a dial timeout), not its caller's — and that
// the function never watches. One it asks ctx.Done() or ctx.Err() of ends
// its work when cancelled (a watch goroutine's stop, the whole request's
// deadline): a sleep that cannot hear it outlasts that end. So does one
// whose cancel func a goroutine of the function calls (`go func() {
// <-stop; cancel() }()`: a stop channel turned into the context's end).
func (c *checker) findDetached(f *ast.File) {
	r := &ctxRoots{c: c, rooted: map[*types.Var]int{}, all: map[*types.Var]int{}, watched: map[*types.Var]bool{},
		cancelOf: map[*types.Var]*types.Var{}, groupOf: map[*types.Var]*types.Var{}, derived: map[*types.Var][]*types.Var{}}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			r.assign(n)
		case *ast.GoStmt:
			for _, v := range c.calledVars(n.Call) {
				// a cancel the goroutine made itself (ctx, cancel :=
				// context.WithTimeout(…) in its own body) is no one
				// else's way to stop that context
				if v.Pos() < n.Pos() || v.Pos() >= n.End() {
					r.goCancels = append(r.goCancels, v)
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				var rhs ast.Expr
				if len(n.Values) == len(n.Names) {
					rhs = n.Values[i]
				} else if len(n.Values) == 1 && i == 0 {
					rhs = n.Values[0]
				}
				r.note(name, rhs)
			}
		case *ast.CallExpr:
			r.call(n)
		}
		return true
	})
	for _, cancel := range r.goCancels {
		if ctx := r.cancelOf[cancel]; ctx != nil {
			r.watched[ctx] = true
		}
	}
	for v, n := range r.all {
		// A parameter came from the caller before any assignment:
		// ctx, cancel = context.WithTimeout(ctx, d) still derives from it.
		if r.rooted[v] == n && !c.params[v] && !r.watched[v] {
			c.detached[v] = true
		}
	}
	// ctx, task := trace.NewTask(ctx, "poll") in a loop, the outer ctx
	// made from context.Background(): as detached as what it wraps.
	for range 4 {
		grew := false
		for v, us := range r.derived {
			if c.detached[v] || c.params[v] || r.watched[v] || r.rooted[v]+len(us) != r.all[v] ||
				slices.ContainsFunc(us, func(u *types.Var) bool { return !c.detached[u] }) {
				continue
			}
			c.detached[v], grew = true, true
		}
		if !grew {
			return
		}
	}
}

// derivedFrom is the context variable a wrapper is handed to make the
// context e (context.WithTimeout(ctx, d), a value wrapper's (ctx, …)),
// or nil.
func (c *checker) derivedFrom(e ast.Expr) *types.Var {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || len(call.Args) == 0 {
		return nil
	}
	fn := c.callee(call)
	if fn == nil || !(funcPath(fn) == "context" && strings.HasPrefix(fn.Name(), "With") || valueWrapper(fn)) {
		return nil
	}
	if id, ok := ast.Unparen(call.Args[0]).(*ast.Ident); ok {
		v, _ := c.info.Uses[id].(*types.Var)
		return v
	}
	return nil
}

// ctxRoots is what findDetached gathers from a file.
type ctxRoots struct {
	c         *checker
	rooted    map[*types.Var]int // assignments from Background/TODO
	all       map[*types.Var]int
	watched   map[*types.Var]bool
	cancelOf  map[*types.Var]*types.Var   // cancel func → its context
	groupOf   map[*types.Var]*types.Var   // errgroup → its context
	goCancels []*types.Var                // cancel funcs called in a goroutine
	derived   map[*types.Var][]*types.Var // contexts wrapped from another variable
}

// note counts an assignment of rhs (nil if unknown) to a context variable.
func (r *ctxRoots) note(lhs ast.Expr, rhs ast.Expr) {
	id, ok := lhs.(*ast.Ident)
	if !ok {
		return
	}
	v, _ := r.c.info.Defs[id].(*types.Var)
	if v == nil {
		v, _ = r.c.info.Uses[id].(*types.Var)
	}
	if v == nil || !isContext(v.Type()) {
		return
	}
	r.all[v]++
	if rhs != nil && r.c.fromBackground(rhs, v, 0) {
		r.rooted[v]++
	} else if u := r.c.derivedFrom(rhs); u != nil && u != v {
		r.derived[v] = append(r.derived[v], u)
	}
}

// assign notes an assignment's contexts, cancel funcs and errgroups.
func (r *ctxRoots) assign(n *ast.AssignStmt) {
	group, gctx := r.c.errgroupPair(n)
	for i, l := range n.Lhs {
		var rhs ast.Expr
		if len(n.Rhs) == len(n.Lhs) {
			rhs = n.Rhs[i]
		} else if len(n.Rhs) == 1 && (i == 0 || gctx != nil) {
			rhs = n.Rhs[0] // ctx, cancel := context.WithTimeout(…); g, ctx := errgroup.WithContext(…)
		}
		r.note(l, rhs)
	}
	if ctx, cancel := r.c.cancelPair(n); ctx != nil {
		r.cancelOf[cancel] = ctx
	}
	if group != nil {
		r.groupOf[group] = gctx
	}
}

// call notes a context watched (ctx.Done(), ctx.Err()) and the first
// goroutine an errgroup starts: g.Go(f), from which on f's failure
// cancels the group's context; before it nothing can.
func (r *ctxRoots) call(n *ast.CallExpr) {
	if v := r.c.watchedCtx(n); v != nil {
		r.watched[v] = true
	}
	if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "Go" {
		if ctx := r.groupOf[r.c.varOf(sel.X)]; ctx != nil && r.c.live[ctx] == token.NoPos {
			r.c.live[ctx] = n.Pos()
		}
	}
}

// errgroupPair returns the variables of `g, ctx :=
// errgroup.WithContext(…)`, or nils.
func (c *checker) errgroupPair(as *ast.AssignStmt) (group, ctx *types.Var) {
	if len(as.Lhs) != 2 || len(as.Rhs) != 1 {
		return nil, nil
	}
	call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
	if !ok || !isFunc(c.callee(call), errgroupPath, "WithContext") {
		return nil, nil
	}
	group, ctx = c.varOf(as.Lhs[0]), c.varOf(as.Lhs[1])
	if group == nil || ctx == nil || !isContext(ctx.Type()) {
		return nil, nil
	}
	return group, ctx
}

// detachedAt reports whether v is a detached context at pos: one the
// function made for itself and never watches, and that no goroutine of
// its errgroup can yet cancel.
func (c *checker) detachedAt(v *types.Var, pos token.Pos) bool {
	return c.detached[v] && (c.live[v] == token.NoPos || pos < c.live[v])
}

// cancelPair returns the variables of `ctx, cancel := context.WithX(…)`,
// or nils.
func (c *checker) cancelPair(as *ast.AssignStmt) (ctx, cancel *types.Var) {
	if len(as.Lhs) != 2 || len(as.Rhs) != 1 {
		return nil, nil
	}
	call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
	if !ok || funcPath(c.callee(call)) != "context" {
		return nil, nil
	}
	ctx, cancel = c.varOf(as.Lhs[0]), c.varOf(as.Lhs[1])
	if ctx == nil || cancel == nil || !isContext(ctx.Type()) {
		return nil, nil
	}
	return ctx, cancel
}

// calledVars returns the func variables called (`cancel()`) in a go
// statement's call: the function literal's body, or the call itself.
func (c *checker) calledVars(call *ast.CallExpr) []*types.Var {
	var vs []*types.Var
	ast.Inspect(call, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if v := c.varOf(ast.Unparen(call.Fun)); v != nil {
				vs = append(vs, v)
			}
		}
		return true
	})
	return vs
}

// watchedCtx returns the context variable call asks Done() or Err() of,
// or nil.
func (c *checker) watchedCtx(call *ast.CallExpr) *types.Var {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || (sel.Sel.Name != "Done" && sel.Sel.Name != "Err") {
		return nil
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := c.info.Uses[id].(*types.Var)
	if v == nil || !isContext(v.Type()) {
		return nil
	}
	return v
}

// xnetContextPath is the old golang.org/x/net/context, whose functions
// hand on to package context's.
const xnetContextPath = "golang.org/x/net/context"

// fromBackground reports whether e is context.Background() or
// context.TODO(), or derives from one (or from self, the variable being
// assigned: ctx, cancel = context.WithTimeout(ctx, d)) through
// context.WithX or errgroup.WithContext.
func (c *checker) fromBackground(e ast.Expr, self *types.Var, depth int) bool {
	if depth > 4 {
		return false
	}
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		return depth > 0 && c.info.Uses[id] == self
	}
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	fn := c.callee(call)
	ctxPkg := funcPath(fn) == "context" || funcPath(fn) == xnetContextPath // x/net/context's are the same functions
	switch {
	case ctxPkg && (fn.Name() == "Background" || fn.Name() == "TODO"):
		return true
	case ctxPkg && strings.HasPrefix(fn.Name(), "With") && len(call.Args) > 0,
		isFunc(fn, errgroupPath, "WithContext") && len(call.Args) > 0:
		return c.fromBackground(call.Args[0], self, depth+1)
	case fn != nil && valueWrapper(fn) && len(call.Args) > 0:
		// sentry.SetHubOnContext(context.Background(), hub): a value
		// laid on the context it is handed, no way to cancel it
		return c.fromBackground(call.Args[0], self, depth+1)
	}
	return false
}

// valueWrapper reports whether fn takes a context first and returns a
// context first, with no function beside it (metadata.NewOutgoingContext,
// a tracer's ContextWithSpan, trace.NewTask's ctx and task): it lays a
// value on the context it is handed; one that could end it hands back its
// cancel or stop (signal.NotifyContext).
func valueWrapper(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Params().Len() == 0 || !isNamed(sig.Params().At(0).Type(), "context", "Context") ||
		sig.Results().Len() == 0 || !isNamed(sig.Results().At(0).Type(), "context", "Context") {
		return false
	}
	for i := 1; i < sig.Results().Len(); i++ {
		if _, isFunc := sig.Results().At(i).Type().Underlying().(*types.Signature); isFunc {
			return false
		}
	}
	return true
}
