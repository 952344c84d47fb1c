package retryloop

import (
	"go/ast"
	"go/types"
)

// A loop that starts its attempt in a goroutine each round hears how it
// went on a channel the goroutine is handed:
//
//	start:
//		errCh := make(chan error, 1)
//		go g.streamEvents(ctx, out, errCh)
//		select {
//		case err := <-errCh:
//			time.Sleep(reconnectInterval)
//			goto start
//		case <-ctx.Done():
//			return
//		}
//
// Receiving an error there is the attempt failing: the case is taken on a
// failure, never on a success.

// receivesGoError reports whether comm, a select case's communication,
// receives from a channel of errors that a go statement in loop hands to
// the goroutine it starts, as an argument or inside the function literal
// it runs.
func (c *checker) receivesGoError(comm ast.Stmt, loop ast.Node) bool {
	x := received(comm)
	if x == nil || loop == nil {
		return false
	}
	t := c.info.TypeOf(x)
	if t == nil {
		return false
	}
	ch, ok := t.Underlying().(*types.Chan)
	if !ok || !isError(ch.Elem()) {
		return false
	}
	v := c.varOf(x)
	if v == nil {
		return false
	}
	found := false
	ast.Inspect(loop, func(n ast.Node) bool {
		g, ok := n.(*ast.GoStmt)
		if !ok || found {
			return !found
		}
		ast.Inspect(g.Call, func(m ast.Node) bool {
			if id, ok := m.(*ast.Ident); ok && c.info.Uses[id] == v {
				found = true
			}
			return !found
		})
		return false
	})
	return found
}
