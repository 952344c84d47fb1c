package retryloop

import (
	"fmt"
	"go/ast"
	"go/types"
)

// go-containerregistry retries every registry call (its remote package's
// requests, and any transport NewRetry wraps) on the Backoff its
// WithRetryBackoff options give: apimachinery's wait.Backoff, copied into
// the module, whose default has a Jitter of 0.1.
const ggcrPath = "github.com/google/go-containerregistry"

// isWaitBackoff reports whether t is apimachinery's wait.Backoff or
// go-containerregistry's copy of it.
func isWaitBackoff(t types.Type) bool {
	return isNamed(t, kWaitPath, "Backoff") || isNamed(t, ggcrPath+"/internal/retry/wait", "Backoff")
}

// ggcrRetryBackoff reports a WithRetryBackoff option of
// go-containerregistry's remote or transport package given a Backoff,
// made in sight, whose Jitter is absent or zero: every registry call the
// library retries then waits the same exponential steps.
func (c *checker) ggcrRetryBackoff(call *ast.CallExpr, decl *ast.BlockStmt) {
	fn := c.callee(call)
	if fn == nil || fn.Name() != "WithRetryBackoff" || len(call.Args) != 1 {
		return
	}
	if p := funcPath(fn); p != ggcrPath+"/pkg/v1/remote" && p != ggcrPath+"/pkg/v1/remote/transport" {
		return
	}
	if c.backoffArg(call.Args[0], decl) != schedPure {
		return
	}
	c.add(finding{check: CheckNoJitter, pos: call.Pos(), end: call.End(),
		msg: fmt.Sprintf("%s gives go-containerregistry's retries a Backoff with no Jitter: every registry call it retries waits the same steps, so clients that failed together retry together; give it a Jitter (the library's default is 0.1), or use recoil", c.callName(call))})
}
