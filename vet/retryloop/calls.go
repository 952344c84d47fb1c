package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

const (
	recoilPath = "github.com/recoil-go/recoil"
	// openapiRuntimePath is go-openapi/runtime, whose ClientTransport
	// carries every go-swagger generated client's calls.
	openapiRuntimePath = "github.com/go-openapi/runtime"
	recoilHTTPPath     = "github.com/recoil-go/recoil/recoilhttp"
	recoilGRPCPath     = "github.com/recoil-go/recoil/recoilgrpc"
	grpcPath           = "google.golang.org/grpc"
	errgroupPath       = "golang.org/x/sync/errgroup"
)

// sdkRoots are the model SDKs whose client methods are remote calls and
// whose clients retry on their own by default.
var sdkRoots = []string{"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go"}

// sdkRoot returns the SDK a package path belongs to, or "".
func sdkRoot(path string) string {
	for _, r := range sdkRoots {
		if path == r || strings.HasPrefix(path, r+"/") {
			return r
		}
	}
	return ""
}

// isSDKOption reports whether path is an SDK's option package.
func isSDKOption(path string) bool {
	r := sdkRoot(path)
	if r == "" {
		return false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(path, r), "/")
	if rest == "option" {
		return true
	}
	// a major version suffix: github.com/openai/openai-go/v3/option
	if i := strings.IndexByte(rest, '/'); i > 0 && rest[0] == 'v' && rest[i+1:] == "option" {
		return true
	}
	return false
}

// callee returns the function or method a call calls (an interface
// method's abstract *types.Func included), or nil.
func (c *checker) callee(call *ast.CallExpr) *types.Func {
	if fn, _ := typeutil.Callee(c.info, call).(*types.Func); fn != nil {
		return fn
	}
	return c.handedFunc(call)
}

func funcPath(fn *types.Func) string {
	if fn == nil || fn.Pkg() == nil {
		return ""
	}
	return fn.Pkg().Path()
}

// isFunc reports whether fn is the package-level function pkg.name (or,
// with recv set, a method of that name on a type of pkg).
func isFunc(fn *types.Func, pkg string, names ...string) bool {
	if funcPath(fn) != pkg {
		return false
	}
	for _, n := range names {
		if fn.Name() == n {
			return true
		}
	}
	return false
}

func recvNamed(fn *types.Func) *types.Named {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return nil
	}
	n, _ := derefNamed(sig.Recv().Type())
	return n
}

// derefNamed is the named type t is, or points to.
func derefNamed(t types.Type) (*types.Named, bool) {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return n, ok
}

// paramIndex returns the index of v among fn's parameters.
func paramIndex(fn *types.Func, v *types.Var) (int, bool) {
	if fn == nil {
		return 0, false
	}
	sig, ok := fn.Type().(*types.Signature)
	if !ok {
		return 0, false
	}
	for i := range sig.Params().Len() {
		if sig.Params().At(i) == v {
			return i, true
		}
	}
	return 0, false
}

func lastResultIsError(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Results().Len() == 0 {
		return false
	}
	return isError(sig.Results().At(sig.Results().Len() - 1).Type())
}

// implementsError reports whether t, or a pointer to it, has an Error
// method: a concrete error type (APIError, *StatusError).
func implementsError(t types.Type) bool {
	return types.Implements(t, errorIface) || types.Implements(types.NewPointer(t), errorIface)
}

func isError(t types.Type) bool {
	if t == nil {
		return false
	}
	e := types.Universe.Lookup("error").Type()
	// type Result error: an error by another name; type Error interface {
	// error; Matches(...) bool }: a client's own error interface
	return types.Identical(t, e) || (types.IsInterface(t) && !isTypeParam(t) && types.Implements(t, errorIface))
}

func isTypeParam(t types.Type) bool {
	_, ok := t.(*types.TypeParam)
	return ok
}

func isNamed(t types.Type, pkg, name string) bool {
	// an alias is the type it names: golang.org/x/net/context's Context
	// is context.Context
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	o := n.Obj()
	return o.Pkg() != nil && o.Pkg().Path() == pkg && o.Name() == name
}

func isContext(t types.Type) bool {
	return ctxLike(t, 0)
}

// ctxLike is isContext to a depth of embedding: context.Context itself;
// a package's own context that embeds it (type Context interface {
// context.Context; … }, or a struct with the field), whose Done and Err
// are the embedded context's; a struct that keeps one in a field and
// forwards its Done and Err to it (a KContext with a Context field and
// methods of its own); or a struct that embeds any of these (an
// AppContext embedding *KContext).
func ctxLike(t types.Type, depth int) bool {
	if isNamed(t, "context", "Context") {
		return true
	}
	if depth > 3 {
		return false
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	switch u := n.Underlying().(type) {
	case *types.Interface:
		for i := range u.NumEmbeddeds() {
			if isNamed(u.EmbeddedType(i), "context", "Context") {
				return true
			}
		}
	case *types.Struct:
		kept := false
		for i := range u.NumFields() {
			f := u.Field(i)
			if f.Embedded() && ctxLike(f.Type(), depth+1) {
				return true
			}
			kept = kept || isNamed(f.Type(), "context", "Context")
		}
		return kept && hasMethod(n, "Done") && hasMethod(n, "Err")
	}
	return false
}

// hasMethod reports whether n or *n has a method of that name.
func hasMethod(n *types.Named, name string) bool {
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(n), true, n.Obj().Pkg(), name)
	_, ok := obj.(*types.Func)
	return ok
}

// remoteKind classifies a call as a call to a remote endpoint: net/http's
// client, a model SDK's client method, a gRPC method; or a helper known
// (by summary or fact) to make one.
func (c *checker) remoteKind(call *ast.CallExpr) int {
	return c.funcRemote(c.callee(call))
}

// funcRemote is remoteKind for a call of fn.
func (c *checker) funcRemote(fn *types.Func) int {
	if fn == nil {
		return remoteNone
	}
	path := funcPath(fn)
	switch {
	case path == "net/http":
		if fn.Name() == "RoundTrip" {
			return remoteHTTP
		}
		switch fn.Name() {
		case "Do", "Get", "Post", "PostForm", "Head":
			if r := recvNamed(fn); r == nil || r.Obj().Name() == "Client" {
				return remoteHTTP
			}
		}
		return remoteNone
	case path == fasthttpPath:
		// fasthttp's clients fill the response handed them and return an
		// error only when no answer came, as net/http's do.
		if isFastHTTPSend(fn) {
			return remoteHTTP
		}
		return remoteNone
	case sdkRoot(path) != "" && !isSDKOption(path):
		if recvNamed(fn) != nil && lastResultIsError(fn) {
			return remoteSDK
		}
		return remoteNone
	case strings.HasPrefix(path, recoilPath):
		return remoteNone
	case path == openapiRuntimePath && fn.Name() == "Submit" && isIfaceMethod(fn):
		// A go-swagger client's transport: each generated operation
		// sends one request and hands back every non-2xx answer as a
		// typed error, as a model SDK does.
		return remoteSDK
	}
	if fn.Name() == "RoundTrip" && recvNamed(fn) != nil && lastResultIsError(fn) {
		return remoteHTTP
	}
	if isDoer(fn) {
		// func(*http.Request) (*http.Response, error) behind an interface
		// or a func type (a Sender, a Doer): an HTTP client by its shape
		return remoteHTTP
	}
	if sig, ok := fn.Type().(*types.Signature); ok && lastResultIsError(fn) {
		if sig.Variadic() {
			last := sig.Params().At(sig.Params().Len() - 1).Type()
			if s, ok := last.(*types.Slice); ok && isNamed(s.Elem(), grpcPath, "CallOption") {
				return remoteGRPC
			}
		}
		if r := recvNamed(fn); r != nil && strings.HasSuffix(r.Obj().Name(), "Client") && fn.Pkg() != nil {
			for _, imp := range fn.Pkg().Imports() {
				if imp.Path() == grpcPath {
					return remoteGRPC
				}
			}
		}
	}
	if f := c.fact(fn); f != nil {
		if f.Remote == remoteHTTP && !returnsResponse(fn) && (f.StatusResult == 0 || c.decls[fn] == nil) {
			// A helper that turns the response into an error (or a
			// value): a non-2xx status comes back as its error, as from
			// a model SDK. One of this package's that returns the
			// status itself (code, body, err := get(u)) is read through
			// instead: its error on each status is what its body says.
			return remoteSDK
		}
		return f.Remote
	}
	return remoteNone
}

// isDoer reports whether fn is an interface method with http.Client.Do's
// shape: func(*http.Request) (*http.Response, error).
func isDoer(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || !isIfaceMethod(fn) || sig.Params().Len() != 1 || sig.Results().Len() != 2 {
		return false
	}
	return isNamed(sig.Params().At(0).Type(), "net/http", "Request") &&
		isNamed(sig.Results().At(0).Type(), "net/http", "Response") && isError(sig.Results().At(1).Type())
}

// returnsResponse reports whether fn returns an *http.Response.
func returnsResponse(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	return ok && resultsResponse(sig)
}

// resultsResponse reports whether a signature returns an *http.Response.
func resultsResponse(sig *types.Signature) bool {
	for i := range sig.Results().Len() {
		if isNamed(sig.Results().At(i).Type(), "net/http", "Response") {
			return true
		}
	}
	return false
}

// readsRetryAfter reports whether a call reads Retry-After: recoilhttp's
// readers, or a helper known to.
func (c *checker) readsRetryAfter(call *ast.CallExpr) bool {
	fn := c.callee(call)
	if fn == nil {
		return false
	}
	if strings.HasPrefix(funcPath(fn), recoilPath) && (strings.Contains(fn.Name(), "Wait") || strings.Contains(fn.Name(), "RetryAfter")) {
		return true
	}
	if f := c.fact(fn); f != nil {
		return f.RetryAfter
	}
	return false
}

// isRecoilCall reports whether a call goes through recoil's own retry
// loop (a function or method of the core package).
func (c *checker) isRecoilCall(call *ast.CallExpr) bool {
	return funcPath(c.callee(call)) == recoilPath
}

// waitInfo describes one wait: its duration's purity, and whether it is
// deaf to a context (time.Sleep, a bare <-time.After).
type waitInfo struct {
	dur  purity
	deaf bool
	// sleep is set for a direct time.Sleep call, the one form the
	// deafwait fix rewrites.
	sleep bool
	// helper names the function that waits, when the wait is a call to one.
	helper string
	// inner is set for a call of a function that waits inside itself (by
	// its fact): a wait that is part of the attempt when the loop has a
	// wait of its own.
	inner bool
	// ownRetry is set for a call of a function whose waits pace a retry
	// loop of its own (FuncFact.OwnRetry): their jitter and deafness are
	// judged there.
	ownRetry bool
	// bg is set for a helper call deaf only because it, or a helper it
	// calls, is handed context.Background() to wait on.
	bg bool
}

// wait reports whether call waits and how. body is the enclosing function
// body (for the duration's assignments) and fn the enclosing function.
func (c *checker) wait(call *ast.CallExpr, body *ast.BlockStmt, fn *types.Func) (waitInfo, bool) {
	callee := c.callee(call)
	if callee == nil {
		if w, ok := c.rican7Wait(call, body); ok {
			return w, true
		}
		if w, ok := c.litWait(call, body, fn); ok {
			return w, true
		}
		return c.sleepField(call, body, fn)
	}
	switch {
	case isFunc(callee, "time", "Sleep") && recvNamed(callee) == nil && len(call.Args) == 1:
		return waitInfo{dur: c.purity(call.Args[0], body, fn, 0), deaf: true, sleep: true}, true
	case isFunc(callee, "time", "After", "NewTimer", "NewTicker", "Tick") && recvNamed(callee) == nil && len(call.Args) == 1:
		// A ticker made in the loop and stopped after its first tick
		// is a one-shot wait too.
		deaf := (callee.Name() == "After" || callee.Name() == "Tick") && c.bareReceive(call)
		return waitInfo{dur: c.purity(call.Args[0], body, fn, 0), deaf: deaf}, true
	case isFunc(callee, "time", "Reset") && recvNamed(callee) != nil && recvNamed(callee).Obj().Name() == "Timer" && len(call.Args) == 1:
		if c.afterFuncTimer(call, body) {
			return waitInfo{}, false // a callback's timer: nothing waits on it
		}
		return waitInfo{dur: c.purity(call.Args[0], body, fn, 0)}, true
	}
	f := c.fact(callee)
	if f == nil && isIfaceMethod(callee) {
		f, _ = c.ifaceFact(call, callee, body)
	}
	if f == nil {
		return c.clockWait(call, callee, body, fn)
	}
	if !f.Waits || f.Remote != remoteNone {
		return waitInfo{}, false
	}
	// A helper handed context.Background() where no context is in scope
	// (Retry running WithContext(context.Background(), …)) waits deaf to
	// its own callers'; where one is, the caller chose to detach the call
	// (a heartbeat's exec), and the helper's wait is as it hears it.
	// apimachinery's polls on a Background context are pollRetry's.
	bg := !f.Deaf && funcPath(callee) != kWaitPath && !c.ctxInScope(call.Pos()) && c.bgCtxArg(call, callee)
	w := waitInfo{deaf: f.Deaf || bg, bg: f.BgDeaf || bg, helper: callee.Name(), inner: true, ownRetry: f.OwnRetry}
	switch {
	case f.Jitter == jitterNone:
		w.dur = purity{kind: pPure, byDefault: f.ByDefault}
	case f.Jitter == jitterYes:
		w.dur = purity{kind: pRand}
	case f.DurParam > 0 && f.DurParam-1 < len(call.Args) && !call.Ellipsis.IsValid():
		w.dur = c.purity(call.Args[f.DurParam-1], body, fn, 0)
	case f.DurParams != 0:
		w.dur = c.bindParams(purity{kind: pParam, params: f.DurParams}, call, body, fn, 0)
	case f.DurField != "":
		w.dur = c.heldPurity(call, f.DurField, body, fn)
	}
	return w, true
}

// sleepField reports a call through a func field or variable that the
// package gives only time.Sleep (sleep: time.Sleep, kept to be swapped in
// tests) as a wait with time.Sleep's duration and deafness; one given only
// time.After (after := time.After; if r.After != nil { after = r.After })
// as time.After.
func (c *checker) sleepField(call *ast.CallExpr, body *ast.BlockStmt, fn *types.Func) (waitInfo, bool) {
	if len(call.Args) != 1 {
		return waitInfo{}, false
	}
	g, ok := c.funcTargets(call, body)
	if !ok || len(g.targets) == 0 || len(g.lits) > 0 || len(g.made) > 0 {
		return waitInfo{}, false
	}
	after := false
	for i, t := range g.targets {
		if !isFunc(t, "time", "Sleep", "After") || recvNamed(t) != nil || (i > 0 && t != g.targets[0]) {
			return waitInfo{}, false
		}
		after = t.Name() == "After"
	}
	name := types.ExprString(call.Fun)
	deaf := !after || c.bareReceive(call)
	return waitInfo{dur: c.purity(call.Args[0], body, fn, 0), deaf: deaf, helper: name}, true
}

// bareReceive reports whether a time.After call is received from on its
// own, not as one case of a select.
func (c *checker) bareReceive(call *ast.CallExpr) bool { return c.bare[call] }

// findBare fills c.bare: the calls received from (<-f()) outside the
// communication of a select case.
func (c *checker) findBare(f *ast.File) {
	inSelect := map[ast.Expr]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if cc, ok := n.(*ast.CommClause); ok && cc.Comm != nil {
			ast.Inspect(cc.Comm, func(m ast.Node) bool {
				if u, ok := m.(*ast.UnaryExpr); ok && u.Op == token.ARROW {
					inSelect[u] = true
				}
				return true
			})
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.ARROW && !inSelect[u] {
			if call, ok := ast.Unparen(u.X).(*ast.CallExpr); ok {
				c.bare[call] = true
			}
		}
		return true
	})
}

// ctxInScope returns the name of a context.Context variable in scope at pos,
// or "".
func (c *checker) ctxInScope(pos token.Pos) bool { return c.ctxName(pos) != "" }

func (c *checker) ctxName(pos token.Pos) string {
	if name := c.varInScope(pos, func(v *types.Var) bool { return isContext(v.Type()) && !c.detachedAt(v, pos) }); name != "" {
		return name
	}
	// The request a handler or a client was handed carries its caller's
	// context: req.Context() — unless its callers made it with none.
	if name := c.varInScope(pos, func(v *types.Var) bool {
		return c.params[v] && isNamed(v.Type(), "net/http", "Request") && !c.backgroundRequest(v)
	}); name != "" {
		return name + ".Context()"
	}
	// So does a pipeline's request that wraps one: azcore's
	// policy.Request gives it as req.Raw(), echo's Context as c.Request().
	if name := c.varInScope(pos, func(v *types.Var) bool { return c.params[v] && requestMethod(v.Type()) != "" }); name != "" {
		// The name may be shadowed at pos by a variable of another type
		// (varInScope looks scope by scope): then there is no such call.
		if _, o := c.pass.Pkg.Scope().Innermost(pos).LookupParent(name, pos); o != nil {
			if m := requestMethod(o.Type()); m != "" {
				return name + "." + m + "().Context()"
			}
		}
	}
	// And a value that keeps the request in a field, its own or one it
	// embeds: gin's handler context (c.Request), a gateway's request
	// (req.Forwarded), an application's context embedding gin's.
	if name := c.varInScope(pos, func(v *types.Var) bool { return c.params[v] && requestField(v.Type(), 0) != "" }); name != "" {
		if _, o := c.pass.Pkg.Scope().Innermost(pos).LookupParent(name, pos); o != nil {
			if f := requestField(o.Type(), 0); f != "" {
				return name + "." + f + ".Context()"
			}
		}
	}
	// And a value that keeps its caller's context and hands it out:
	// an incoming request's r.Ctx(), a stream's s.Context().
	if name := c.varInScope(pos, func(v *types.Var) bool { return c.params[v] && c.ctxMethod(v.Type()) != "" }); name != "" {
		if _, o := c.pass.Pkg.Scope().Innermost(pos).LookupParent(name, pos); o != nil {
			if m := c.ctxMethod(o.Type()); m != "" {
				return name + "." + m + "()"
			}
		}
	}
	// And a field of the receiver's that the function listens to itself.
	return c.heardField(pos)
}

// requestField returns the name of t's field that holds an *http.Request
// (or an http.Request), t a struct or a pointer to one: its own field, or
// one promoted from a struct it embeds, to a depth of embedding; a field
// named Request first. It returns "" for none, and for *http.Request
// itself.
func requestField(t types.Type, depth int) string {
	if isNamed(t, "net/http", "Request") || depth > 3 {
		return ""
	}
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return ""
	}
	found := ""
	for i := range st.NumFields() {
		f := st.Field(i)
		switch {
		case !f.Exported():
		case isNamed(f.Type(), "net/http", "Request"):
			if found == "" || f.Name() == "Request" {
				found = f.Name()
			}
		case f.Embedded() && found == "":
			found = requestField(f.Type(), depth+1)
		}
	}
	return found
}

// requestMethod returns the name of t's method that takes nothing and
// returns the *http.Request t wraps, or "".
func requestMethod(t types.Type) string {
	if isNamed(t, "net/http", "Request") {
		return ""
	}
	ms := types.NewMethodSet(t)
	for i := range ms.Len() {
		sig, ok := ms.At(i).Type().(*types.Signature)
		if !ok || sig.Params().Len() != 0 || sig.Results().Len() != 1 {
			continue
		}
		if isNamed(sig.Results().At(0).Type(), "net/http", "Request") {
			return ms.At(i).Obj().Name()
		}
	}
	return ""
}

// varInScope returns the name of the innermost, latest declared variable
// in scope at pos that ok accepts, or "".
func (c *checker) varInScope(pos token.Pos, ok func(*types.Var) bool) string {
	s := c.pass.Pkg.Scope().Innermost(pos)
	for ; s != nil && s != c.pass.Pkg.Scope() && s != types.Universe; s = s.Parent() {
		best := ""
		bestPos := token.NoPos
		for _, name := range s.Names() {
			if name == "_" {
				continue
			}
			v, isVar := s.Lookup(name).(*types.Var)
			if !isVar || v.Pos() >= pos || !ok(v) {
				continue
			}
			if v.Pos() > bestPos {
				best, bestPos = name, v.Pos()
			}
		}
		if best != "" {
			return best
		}
	}
	return ""
}

const fasthttpPath = "github.com/valyala/fasthttp"

// isFastHTTPSend reports whether fn is one of fasthttp's sends: Do,
// DoTimeout, DoDeadline or DoRedirects, of a Client, a HostClient, a
// PipelineClient or the package, each taking the request and the response
// it fills.
func isFastHTTPSend(fn *types.Func) bool {
	switch fn.Name() {
	case "Do", "DoTimeout", "DoDeadline", "DoRedirects":
	default:
		return false
	}
	sig := fn.Type().(*types.Signature)
	return sig.Params().Len() >= 2 && isNamed(sig.Params().At(0).Type(), fasthttpPath, "Request") &&
		isNamed(sig.Params().At(1).Type(), fasthttpPath, "Response") && lastResultIsError(fn)
}
