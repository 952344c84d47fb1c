package retryloop

import "go/ast"

// testHelper reports whether a function takes a *testing.T, *testing.B,
// *testing.F or testing.TB: test support that lives outside a _test.go
// file (a harness's Wait(t, url, attempts)) is checked as test files are,
// only under -testfiles. Its loops are readiness probes of the code under
// test, not calls a service makes in production.
func (c *checker) testHelper(fd *ast.FuncDecl) bool {
	for _, f := range fd.Type.Params.List {
		t := c.info.TypeOf(f.Type)
		for _, name := range []string{"T", "B", "F", "TB"} {
			if t != nil && isNamed(t, "testing", name) {
				return true
			}
		}
	}
	return false
}
