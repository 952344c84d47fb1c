package retryloop

import (
	"go/ast"
	"go/types"
)

// retryablePath is hashicorp's go-retryablehttp.
const retryablePath = "github.com/hashicorp/go-retryablehttp"

// retryableRetryAfter reports a request sent through a go-retryablehttp
// client the package configures to retry 429 and 503 (its CheckRetry is
// the library's DefaultRetryPolicy, or a function of the package built on
// it, or left as NewClient sets it) with a Backoff that never reads
// Retry-After: LinearJitterBackoff, or a function of the package that
// reads no Retry-After. The library's DefaultBackoff reads it; so does
// RateLimitLinearJitterBackoff. What the user passes in an option is the
// user's; the package's own values decide.
func (c *checker) retryableRetryAfter(call *ast.CallExpr) {
	fn := c.callee(call)
	if fn == nil || funcPath(fn) != retryablePath {
		return
	}
	r := recvNamed(fn)
	if r == nil || r.Obj().Name() != "Client" {
		return
	}
	switch fn.Name() {
	case "Do", "Get", "Post", "PostForm", "Head":
	default:
		return
	}
	st, ok := r.Underlying().(*types.Struct)
	if !ok {
		return
	}
	field := func(name string) *types.Var {
		for i := range st.NumFields() {
			if st.Field(i).Name() == name {
				return st.Field(i)
			}
		}
		return nil
	}
	bo, cr := field("Backoff"), field("CheckRetry")
	if bo == nil || cr == nil {
		return
	}
	backoffs := c.funcLeaves(bo, 0)
	if len(backoffs) == 0 {
		return // NewClient's DefaultBackoff, which reads Retry-After
	}
	for _, b := range backoffs {
		if b == nil || c.leafReadsRetryAfter(b) {
			return
		}
	}
	for _, p := range c.funcLeaves(cr, 0) {
		if p == nil || !c.leafRetriesTransient(p) {
			return
		}
	}
	if vals := c.fieldValues[field("RetryMax")]; len(vals) > 0 && c.allZero(vals) {
		return
	}
	c.add(finding{check: CheckRetryAfter, pos: call.Pos(), end: call.End(),
		msg: "go-retryablehttp client retries 429 and 503 with a Backoff that never reads Retry-After: the server said when to come back; use retryablehttp.DefaultBackoff (it reads it) or recoilhttp.Transport"})
}

// funcLeaves follows the values a package gives a func field through the
// fields and variables they are copied from, to the functions: a
// function (the package's or another's), or a literal; nil for a value it
// cannot follow. A parameter (the user's option) is left out.
func (c *checker) funcLeaves(f *types.Var, depth int) []ast.Node {
	var out []ast.Node
	for _, fv := range c.fieldValues[f] {
		if c.selfCopy(f, fv.expr) {
			continue // the field copied from another value of its type
		}
		out = append(out, c.funcLeaf(fv.expr, fv.body, depth)...)
	}
	return out
}

func (c *checker) funcLeaf(e ast.Expr, body *ast.BlockStmt, depth int) []ast.Node {
	if depth > 4 {
		return []ast.Node{nil}
	}
	e = ast.Unparen(e)
	if isNil(c.info, e) || c.isParam(e) {
		return nil
	}
	switch x := e.(type) {
	case *ast.FuncLit:
		return []ast.Node{x}
	case *ast.SelectorExpr:
		switch o := c.info.Uses[x.Sel].(type) {
		case *types.Func:
			return []ast.Node{x.Sel}
		case *types.Var:
			if o.IsField() {
				return c.funcLeaves(o, depth+1)
			}
		}
	case *ast.Ident:
		switch o := c.info.Uses[x].(type) {
		case *types.Func:
			return []ast.Node{x}
		case *types.Var:
			if init, ok := c.pkgVars[o]; ok {
				return c.funcLeaf(init, nil, depth+1)
			}
			if body != nil {
				var out []ast.Node
				for _, a := range c.assignsOf(body)[o] {
					out = append(out, c.funcLeaf(a, body, depth+1)...)
				}
				return out
			}
		}
	}
	return []ast.Node{nil}
}

// leafFunc is the function a leaf names, if it names one.
func (c *checker) leafFunc(n ast.Node) *types.Func {
	if id, ok := n.(*ast.Ident); ok {
		fn, _ := c.info.Uses[id].(*types.Func)
		return fn
	}
	return nil
}

// leafBody is the body of a literal leaf or of a function of the package.
func (c *checker) leafBody(n ast.Node) ast.Node {
	if lit, ok := n.(*ast.FuncLit); ok {
		return lit.Body
	}
	if d := c.decls[c.leafFunc(n)]; d != nil {
		return d.Body
	}
	return nil
}

// leafReadsRetryAfter reports whether a backoff leaf may read Retry-After:
// any function but LinearJitterBackoff of the library, one of another
// package whose fact says so or that has none, one of the package that
// names the header or calls what reads it.
func (c *checker) leafReadsRetryAfter(n ast.Node) bool {
	if fn := c.leafFunc(n); fn != nil && funcPath(fn) == retryablePath {
		return fn.Name() != "LinearJitterBackoff"
	}
	b := c.leafBody(n)
	if b == nil {
		return true
	}
	reads := false
	ast.Inspect(b, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if serverWaitLit(n) {
				reads = true
			}
		case *ast.CallExpr:
			fn := c.callee(n)
			if c.readsRetryAfter(n) || (funcPath(fn) == retryablePath && fn.Name() != "LinearJitterBackoff") {
				reads = true
			}
		}
		return !reads
	})
	return reads
}

// leafRetriesTransient reports whether a CheckRetry leaf is the library's
// DefaultRetryPolicy or ErrorPropagatedRetryPolicy (they retry 429 and
// every 5xx but 501), or a function of the package that returns what one
// of them says.
func (c *checker) leafRetriesTransient(n ast.Node) bool {
	isDefault := func(fn *types.Func) bool {
		return funcPath(fn) == retryablePath && (fn.Name() == "DefaultRetryPolicy" || fn.Name() == "ErrorPropagatedRetryPolicy")
	}
	if fn := c.leafFunc(n); fn != nil && funcPath(fn) == retryablePath {
		return isDefault(fn)
	}
	b := c.leafBody(n)
	if b == nil {
		return false
	}
	if c.policySays(n, 429) == triT || c.policySays(n, 503) == triT {
		return true
	}
	found := false
	ast.Inspect(b, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && isDefault(c.callee(call)) {
			found = true
		}
		return !found
	})
	return found
}

// allZero reports whether every value is the constant 0.
func (c *checker) allZero(vals []fieldValue) bool {
	for _, fv := range vals {
		if n, ok := c.constIntOf(fv.expr); !ok || n != 0 {
			return false
		}
	}
	return true
}

// policySays is what a CheckRetry of the package (func(ctx, resp, err)
// (bool, error)) answers on status st, read as a classifier is.
func (c *checker) policySays(n ast.Node, st int) tri {
	var sig *types.Signature
	var body *ast.BlockStmt
	if lit, ok := n.(*ast.FuncLit); ok {
		sig, _ = c.info.TypeOf(lit).(*types.Signature)
		body = lit.Body
	} else if fn := c.leafFunc(n); fn != nil && c.decls[fn] != nil {
		sig, _ = fn.Type().(*types.Signature)
		body = c.decls[fn].Body
	}
	if sig == nil || body == nil || sig.Results().Len() == 0 || !isBool(sig.Results().At(0).Type()) {
		return triU
	}
	o := outcome{hasStatus: true, status: st}
	env := map[*types.Var]binding{}
	for j := range sig.Params().Len() {
		p := sig.Params().At(j)
		switch {
		case isNamed(p.Type(), "net/http", "Response"):
			env[p] = binding{kind: bResp}
		case isError(p.Type()):
			env[p] = binding{kind: bErr, val: 0}
		default:
			env[p] = binding{kind: bFree}
		}
	}
	in := &inliner{c: c, o: o, k: remoteHTTP, env: env, body: body}
	return in.run(0)
}
