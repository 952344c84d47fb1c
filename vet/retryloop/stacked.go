package retryloop

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// enclosingBody returns the body of the function declaration of f that
// holds pos: the assignments stacked follows a client through.
func enclosingBody(f *ast.File, pos token.Pos) *ast.BlockStmt {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && fd.Body.Pos() <= pos && pos < fd.Body.End() {
			return fd.Body
		}
	}
	return nil
}

// options expands a constructor's arguments: each option call, following
// opts... through the local slice it was built in (a literal and appends).
func (c *checker) options(call *ast.CallExpr, body *ast.BlockStmt) []*ast.CallExpr {
	var out []*ast.CallExpr
	var add func(e ast.Expr, depth int)
	add = func(e ast.Expr, depth int) {
		if depth > 6 {
			return
		}
		switch e := ast.Unparen(e).(type) {
		case *ast.CallExpr:
			if b, ok := c.info.Uses[calleeIdent(e.Fun)].(*types.Builtin); ok && b.Name() == "append" {
				for _, a := range e.Args {
					add(a, depth+1)
				}
				return
			}
			out = append(out, e)
		case *ast.CompositeLit:
			for _, el := range e.Elts {
				add(el, depth+1)
			}
		case *ast.Ident:
			if v, ok := c.info.Uses[e].(*types.Var); ok {
				for _, x := range c.assignsOf(body)[v] {
					add(x, depth+1)
				}
			}
		}
	}
	for _, a := range call.Args {
		add(a, 0)
	}
	return out
}

// stacked reports a retrying SDK client or gRPC channel under a recoil
// layer that also retries.
func (c *checker) stacked(call *ast.CallExpr, f *ast.File) {
	fn := c.callee(call)
	if fn == nil || recvNamed(fn) != nil {
		return
	}
	path := funcPath(fn)
	switch {
	case sdkRoot(path) != "" && !isSDKOption(path) && fn.Name() == "NewClient":
		c.stackedSDK(call, fn, f)
	case path == grpcPath && (fn.Name() == "NewClient" || fn.Name() == "Dial" || fn.Name() == "DialContext"):
		c.stackedGRPC(call, f)
	}
}

func (c *checker) stackedSDK(call *ast.CallExpr, fn *types.Func, f *ast.File) {
	body := enclosingBody(f, call.Pos())
	var retries *ast.CallExpr
	var httpClient ast.Expr
	optPkg := ""
	for _, o := range c.options(call, body) {
		ofn := c.callee(o)
		if ofn == nil || !isSDKOption(funcPath(ofn)) {
			continue
		}
		if sel, ok := o.Fun.(*ast.SelectorExpr); ok && optPkg == "" {
			optPkg = types.ExprString(sel.X)
		}
		switch ofn.Name() {
		case "WithMaxRetries":
			retries = o
		case "WithHTTPClient":
			if len(o.Args) == 1 {
				httpClient = o.Args[0]
			}
		}
	}
	if httpClient == nil || !c.recoilClient(httpClient, body, 0) {
		return
	}
	sdk := strings.TrimPrefix(sdkRoot(funcPath(fn)), "github.com/")
	sdk = sdk[strings.IndexByte(sdk, '/')+1:]
	f2 := finding{check: CheckStacked, pos: call.Pos(), end: call.End()}
	switch {
	case retries == nil:
		f2.msg = fmt.Sprintf("%s client keeps its default retries under a retrying recoilhttp.Transport: attempts multiply (3 × 3 = 9 per call); add %s.WithMaxRetries(0)", sdk, optPkg)
		if !call.Ellipsis.IsValid() && optPkg != "" {
			f2.fixes = []analysis.SuggestedFix{{
				Message:   "turn the SDK's own retries off",
				TextEdits: []analysis.TextEdit{{Pos: call.Rparen, End: call.Rparen, NewText: fmt.Appendf(nil, ", %s.WithMaxRetries(0)", optPkg)}},
			}}
		}
	default:
		n, ok := c.evalInt(retries.Args[0], outcome{}, body, 0)
		if !ok || n <= 0 || len(retries.Args) != 1 {
			return
		}
		f2.msg = fmt.Sprintf("%s client retries %d times under a retrying recoilhttp.Transport: attempts multiply; use %s.WithMaxRetries(0)", sdk, n, optPkg)
		f2.fixes = []analysis.SuggestedFix{{
			Message:   "turn the SDK's own retries off",
			TextEdits: []analysis.TextEdit{{Pos: retries.Args[0].Pos(), End: retries.Args[0].End(), NewText: []byte("0")}},
		}}
	}
	c.add(f2)
}

// recoilClient reports whether e is an *http.Client whose Transport is a
// recoilhttp.Transport, following local variables.
func (c *checker) recoilClient(e ast.Expr, body *ast.BlockStmt, depth int) bool {
	if depth > 6 {
		return false
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.UnaryExpr:
		if e.Op == token.AND {
			return c.recoilClient(e.X, body, depth+1)
		}
	case *ast.CompositeLit:
		for _, el := range e.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Transport" && c.recoilTransport(kv.Value, body, depth+1) {
					return true
				}
			}
		}
	case *ast.Ident:
		v, ok := c.info.Uses[e].(*types.Var)
		if !ok {
			return false
		}
		for _, x := range c.assignsOf(body)[v] {
			if c.recoilClient(x, body, depth+1) {
				return true
			}
		}
		// hc.Transport = rt
		found := false
		if body != nil {
			ast.Inspect(body, func(n ast.Node) bool {
				as, ok := n.(*ast.AssignStmt)
				if !ok || len(as.Lhs) != len(as.Rhs) {
					return !found
				}
				for i, l := range as.Lhs {
					sel, ok := l.(*ast.SelectorExpr)
					if ok && sel.Sel.Name == "Transport" && identOf(sel.X) != nil && c.info.Uses[identOf(sel.X)] == v &&
						c.recoilTransport(as.Rhs[i], body, depth+1) {
						found = true
					}
				}
				return !found
			})
		}
		return found
	}
	return false
}

func (c *checker) recoilTransport(e ast.Expr, body *ast.BlockStmt, depth int) bool {
	if depth > 6 {
		return false
	}
	if t := c.info.TypeOf(e); isNamed(t, recoilHTTPPath, "Transport") {
		return true
	}
	if id := identOf(e); id != nil {
		if v, ok := c.info.Uses[id].(*types.Var); ok {
			for _, x := range c.assignsOf(body)[v] {
				if c.recoilTransport(x, body, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

func (c *checker) stackedGRPC(call *ast.CallExpr, f *ast.File) {
	body := enclosingBody(f, call.Pos())
	retryPolicy, disabled, intercepted := false, false, false
	grpcPkg := ""
	for _, o := range c.options(call, body) {
		ofn := c.callee(o)
		if ofn == nil || funcPath(ofn) != grpcPath {
			continue
		}
		if sel, ok := o.Fun.(*ast.SelectorExpr); ok && grpcPkg == "" {
			grpcPkg = types.ExprString(sel.X)
		}
		switch ofn.Name() {
		case "WithDisableRetry":
			disabled = true
		case "WithDefaultServiceConfig":
			if len(o.Args) == 1 && strings.Contains(c.constString(o.Args[0], body), "retryPolicy") {
				retryPolicy = true
			}
		case "WithUnaryInterceptor", "WithStreamInterceptor", "WithChainUnaryInterceptor", "WithChainStreamInterceptor":
			for _, a := range o.Args {
				if c.mentionsPkg(a, recoilGRPCPath, body) {
					intercepted = true
				}
			}
		}
	}
	if !retryPolicy || disabled || !intercepted {
		return
	}
	f2 := finding{check: CheckStacked, pos: call.Pos(), end: call.End(),
		msg: fmt.Sprintf("grpc-go's retryPolicy is left on under a recoilgrpc interceptor: attempts multiply; add %s.WithDisableRetry()", grpcPkg)}
	if !call.Ellipsis.IsValid() {
		f2.fixes = []analysis.SuggestedFix{{
			Message:   "turn grpc-go's own retries off",
			TextEdits: []analysis.TextEdit{{Pos: call.Rparen, End: call.Rparen, NewText: fmt.Appendf(nil, ", %s.WithDisableRetry()", grpcPkg)}},
		}}
	}
	c.add(f2)
}

// constString returns e's constant string value, following a local
// variable; "" if it has none.
func (c *checker) constString(e ast.Expr, body *ast.BlockStmt) string {
	if tv, ok := c.info.Types[e]; ok && tv.Value != nil {
		return tv.Value.ExactString()
	}
	if id := identOf(e); id != nil {
		if v, ok := c.info.Uses[id].(*types.Var); ok {
			var b strings.Builder
			for _, x := range c.assignsOf(body)[v] {
				if x != unknownExpr {
					b.WriteString(c.constString(x, body))
				}
			}
			if init, ok := c.pkgVars[v]; ok {
				b.WriteString(c.constString(init, nil))
			}
			return b.String()
		}
	}
	return ""
}

// mentionsPkg reports whether e refers to something of package path, or
// to a local variable that holds one.
func (c *checker) mentionsPkg(e ast.Expr, path string, body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		x, ok := n.(ast.Expr)
		if !ok {
			return true
		}
		if t := c.info.TypeOf(x); t != nil {
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			if nt, ok := t.(*types.Named); ok && nt.Obj().Pkg() != nil && nt.Obj().Pkg().Path() == path {
				found = true
			}
		}
		if id, ok := x.(*ast.Ident); ok {
			if o := c.info.Uses[id]; o != nil && o.Pkg() != nil && o.Pkg().Path() == path {
				found = true
			}
		}
		return true
	})
	return found
}
