package retryloop

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// apimachinery's wait package drives a condition func round and round:
// the Poll family every interval until it answers done, ExponentialBackoff
// on a wait.Backoff's schedule. The condition answers "not yet" with
// (false, nil). Answering that on a failure it tested (an update that
// failed, a conflict) makes the call a retry loop whose waits are the
// library's: the Poll family's interval is the same for every client, and
// the non-context Poll functions wait on a context of their own.
// Answering it on "not found" waits for a thing to appear: polling.

// kPoll is one function of the wait.Poll family: the index of its
// interval argument, and whether it waits on the caller's context (or
// stop channel).
type kPoll struct {
	interval int
	hears    bool
}

var kPolls = map[string]kPoll{
	"Poll":                             {0, false},
	"PollImmediate":                    {0, false},
	"PollInfinite":                     {0, false},
	"PollImmediateInfinite":            {0, false},
	"PollUntil":                        {0, true},
	"PollImmediateUntil":               {0, true},
	"PollWithContext":                  {1, true},
	"PollImmediateWithContext":         {1, true},
	"PollUntilWithContext":             {1, true},
	"PollImmediateUntilWithContext":    {1, true},
	"PollInfiniteWithContext":          {1, true},
	"PollImmediateInfiniteWithContext": {1, true},
	"PollUntilContextCancel":           {1, true},
	"PollUntilContextTimeout":          {1, true},
}

// pollRetry reports a call of the wait.Poll family that waits on a
// context of its own while one is in scope (deafwait), and one whose
// condition goes round on a failure every constant interval (nojitter).
func (c *checker) pollRetry(call *ast.CallExpr, decl *ast.BlockStmt, fn *types.Func) {
	callee := c.callee(call)
	if callee == nil || funcPath(callee) != kWaitPath || recvNamed(callee) != nil {
		return
	}
	p, ok := kPolls[callee.Name()]
	if !ok || len(call.Args) <= p.interval {
		return
	}
	if ctx := c.ctxName(call.Pos()); !p.hears && ctx != "" {
		c.add(finding{check: CheckDeafWait, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s polls on a context of its own (context.Background) and cannot hear %s: the caller's cancellation and deadline go unheard; use wait.PollUntilContextTimeout(%s, …)", c.callName(call), ctx, ctx)})
	}
	why, ok := c.failureRound(c.condArg(call), decl)
	if !ok || c.pollInterval(call, p, decl, fn).kind != pPure {
		return
	}
	c.add(finding{check: CheckNoJitter, pos: call.Pos(), end: call.End(),
		msg: fmt.Sprintf("%s goes round on a failure (%s) every constant interval: clients that failed together retry together; retry the failure with wait.ExponentialBackoffWithContext and a Backoff with a Jitter, or use recoil", c.callName(call), why)})
}

// pollInterval is the purity of a Poll call's interval; a duration
// parameter of fn is resolved through its callers (an exported helper's
// is pure whatever they pass).
func (c *checker) pollInterval(call *ast.CallExpr, p kPoll, decl *ast.BlockStmt, fn *types.Func) purity {
	return c.callersPurity(fn, c.purity(call.Args[p.interval], decl, fn, 0))
}

// condArg returns the argument of a wait call that is its condition: a
// func answering (bool, error).
func (c *checker) condArg(call *ast.CallExpr) ast.Expr {
	for _, a := range call.Args {
		t := c.info.TypeOf(a)
		if t == nil {
			continue
		}
		sig, ok := t.Underlying().(*types.Signature)
		if ok && sig.Results().Len() == 2 && isError(sig.Results().At(1).Type()) {
			if b, ok := sig.Results().At(0).Type().Underlying().(*types.Basic); ok && b.Kind() == types.Bool {
				return a
			}
		}
	}
	return nil
}

// condBodies returns the bodies a condition argument stands for: a
// function literal, a local variable given literals, a conversion
// (wait.ConditionFunc(f)), a function or method of the package (or what
// one returns).
func (c *checker) condBodies(e ast.Expr, decl *ast.BlockStmt) []*ast.BlockStmt {
	if e == nil {
		return nil
	}
	var out []*ast.BlockStmt
	for _, s := range c.sources(e, decl, 0) {
		switch x := s.e.(type) {
		case *ast.FuncLit:
			out = append(out, x.Body)
		case *ast.CallExpr:
			if c.typeNameOf(x.Fun) != nil && len(x.Args) == 1 {
				out = append(out, c.condBodies(x.Args[0], s.body)...)
			}
		default:
			if id := calleeIdent(x); id != nil {
				if f, ok := c.info.Uses[id].(*types.Func); ok && c.decls[f] != nil {
					out = append(out, c.decls[f].Body)
				}
			}
		}
	}
	return out
}

// failureRound reports whether a condition answers "not yet" (false, nil)
// on a failure and never on a success, and the test that decides it. A
// condition that also answers it on a success (a state not reached yet)
// is a poll: its interval paces the polling as much as the retries.
func (c *checker) failureRound(e ast.Expr, decl *ast.BlockStmt) (string, bool) {
	return c.retriesOnly(e, decl, c.pollRound)
}

// retriesOnly reports whether the bodies a condition or an operation
// stands for go round on a failure and never on a success.
func (c *checker) retriesOnly(e ast.Expr, decl *ast.BlockStmt, round func(*ast.ReturnStmt, []ast.Node) (string, int)) (string, bool) {
	why, failure := "", false
	for _, body := range c.condBodies(e, decl) {
		w, f, success := c.rounds(body, round)
		if success {
			return "", false
		}
		if f && !failure {
			why, failure = w, true
		}
	}
	return why, failure
}

// What a return statement of a condition or an operation does.
const (
	roundNone    = iota // it ends the loop
	roundFailure        // it goes round on a failure
	roundSuccess        // it goes round on something else
)

// rounds reads every return in body with round: whether one goes round
// on a failure (and the test that decides it), and whether one goes
// round on something else.
func (c *checker) rounds(body *ast.BlockStmt, round func(*ast.ReturnStmt, []ast.Node) (string, int)) (why string, failure, success bool) {
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		stack = append(stack, n)
		if r, ok := n.(*ast.ReturnStmt); ok {
			if vals, naked := c.nakedResults(body, r); naked {
				r = &ast.ReturnStmt{Return: r.Return, Results: vals}
			}
			switch w, k := round(r, stack); k {
			case roundFailure:
				if !failure {
					why, failure = w, true
				}
			case roundSuccess:
				success = true
			}
		}
		return true
	})
	return why, failure, success
}

// pollRound reads a condition's return: `return false, nil` goes round,
// on a failure when inside a test of an error that holds when one is
// present (or after a test that returned when there was none); `return
// err == nil, nil` goes round exactly when it failed; `return ready, nil`
// goes round when ready is false.
func (c *checker) pollRound(r *ast.ReturnStmt, stack []ast.Node) (string, int) {
	if len(r.Results) != 2 || !isNil(c.info, r.Results[1]) {
		return "", roundNone
	}
	v, known := c.constBool(r.Results[0])
	switch {
	case known && v:
		return "", roundNone
	case !known && (c.errVerdict(r.Results[0]) < 0 || c.okPairPart(r.Results[0], stack)) && !c.successPath(stack):
		return types.ExprString(r.Results[0]) + " is false", roundFailure
	}
	if why, ok := c.failurePath(stack); ok {
		return why, roundFailure
	}
	return "", roundSuccess
}

// failurePath reports whether the node at the top of stack is reached
// because an error is present, judged by the innermost test of an error
// on the way, and names that test. A test of "not found" (or "no such
// kind") is waiting for something to appear, not a failure.
func (c *checker) failurePath(stack []ast.Node) (string, bool) {
	for i := len(stack) - 2; i >= 0; i-- {
		cond, v := c.pathTest(stack, i)
		if v == 0 {
			continue
		}
		if v < 0 || mentionsAbsence(cond) {
			return "", false
		}
		return types.ExprString(cond), true
	}
	return "", false
}

// pathTest is the test of an error that stack[i] makes on the way to
// stack[i+1], and what its holding there means (errVerdict).
func (c *checker) pathTest(stack []ast.Node, i int) (ast.Expr, int) {
	child := stack[i+1]
	switch n := stack[i].(type) {
	case *ast.IfStmt:
		switch child {
		case n.Body:
			return n.Cond, c.errVerdict(n.Cond)
		case n.Else:
			return n.Cond, -c.errVerdict(n.Cond)
		}
	case *ast.CaseClause:
		return c.caseVerdict(n, stack[:i])
	case *ast.BlockStmt:
		return c.earlierExit(n, child)
	}
	return nil, 0
}

// successPath reports whether the innermost test of an error on the way
// to the node at the top of stack holds only when there is none.
func (c *checker) successPath(stack []ast.Node) bool {
	for i := len(stack) - 2; i >= 0; i-- {
		if _, v := c.pathTest(stack, i); v != 0 {
			return v < 0
		}
	}
	return false
}

// caseVerdict is errVerdict for a switch case: a tagless switch's case
// expressions, or a case of a switch on an error (its values other than
// nil are errors present).
func (c *checker) caseVerdict(cc *ast.CaseClause, outer []ast.Node) (ast.Expr, int) {
	var sw *ast.SwitchStmt
	for i := len(outer) - 1; i >= 0 && sw == nil; i-- {
		sw, _ = outer[i].(*ast.SwitchStmt)
	}
	for _, e := range cc.List {
		switch {
		case sw != nil && sw.Tag != nil && isError(c.info.TypeOf(sw.Tag)):
			if isNil(c.info, e) {
				return e, -1
			}
			return e, 1
		case sw != nil && sw.Tag == nil:
			if v := c.errVerdict(e); v != 0 {
				return e, v
			}
		}
	}
	return nil, 0
}

// earlierExit looks in block for a statement before child that returns
// when an error test holds (`if err != nil { return … }`): the code after
// it runs only when the test failed.
func (c *checker) earlierExit(block *ast.BlockStmt, child ast.Node) (ast.Expr, int) {
	var cond ast.Expr
	v := 0
	for _, s := range block.List {
		if s == child {
			break
		}
		is, ok := s.(*ast.IfStmt)
		if !ok || is.Else != nil || len(is.Body.List) == 0 {
			continue
		}
		if _, ret := is.Body.List[len(is.Body.List)-1].(*ast.ReturnStmt); !ret {
			continue
		}
		if w := c.errVerdict(is.Cond); w != 0 {
			cond, v = is.Cond, -w
		}
	}
	return cond, v
}

// errVerdict says what e holding means: 1, that an error is present (err
// != nil, apierrors.IsConflict(err), a test of its text); -1, that none
// is (err == nil); 0, that e tests no error.
func (c *checker) errVerdict(e ast.Expr) int {
	e = ast.Unparen(e)
	switch x := e.(type) {
	case *ast.UnaryExpr:
		if x.Op == token.NOT {
			return -c.errVerdict(x.X)
		}
	case *ast.BinaryExpr:
		switch x.Op {
		case token.LAND, token.LOR:
			a, b := c.errVerdict(x.X), c.errVerdict(x.Y)
			if a == 0 || a == b {
				return b
			}
			if b == 0 {
				return a
			}
			return 0
		case token.EQL, token.NEQ:
			for _, pair := range [][2]ast.Expr{{x.X, x.Y}, {x.Y, x.X}} {
				if isError(c.info.TypeOf(pair[0])) && isNil(c.info, pair[1]) {
					if x.Op == token.NEQ {
						return 1
					}
					return -1
				}
			}
		}
	}
	if c.testsError(e) {
		return 1
	}
	return 0
}

// mentionsAbsence reports whether e tests for something not there yet:
// a call or a sentinel named NotFound, NotExist or NoMatch
// (apierrors.IsNotFound, os.ErrNotExist, meta.IsNoMatchError).
func mentionsAbsence(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			for _, w := range []string{"NotFound", "NotExist", "NoMatch"} {
				if strings.Contains(id.Name, w) {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// kWaitCall reports whether call is one of apimachinery's wait helpers.
func (c *checker) kWaitCall(call *ast.CallExpr) bool {
	f := c.callee(call)
	return f != nil && funcPath(f) == kWaitPath
}
