package retryloop

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// fileOf returns the file of the package that holds pos.
func (c *checker) fileOf(pos token.Pos) *ast.File {
	for _, f := range c.pass.Files {
		if f.FileStart <= pos && pos < f.FileEnd {
			return f
		}
	}
	return nil
}

// importName returns the name a file imports path under ("" if it does
// not import it).
func importName(f *ast.File, path string) string {
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil || p != path {
			continue
		}
		if spec.Name != nil {
			return spec.Name.Name
		}
		return pkgName(path)
	}
	return ""
}

// pkgName is the name a package of import path is known by: its last
// element, or the one before a major version (math/rand/v2 is rand).
func pkgName(path string) string {
	elems := strings.Split(path, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		return elems[len(elems)-2]
	}
	return last
}

// nameTaken reports whether a file imports something else under name.
func nameTaken(f *ast.File, name, except string) bool {
	for _, spec := range f.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		if p == except {
			continue
		}
		n := pkgName(p)
		if spec.Name != nil {
			n = spec.Name.Name
		}
		if n == name {
			return true
		}
	}
	return false
}

// addImport is the edit that adds path to a file's parenthesised import
// block, or false if the file has none.
func addImport(f *ast.File, path string) (analysis.TextEdit, bool) {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT || !gd.Lparen.IsValid() {
			continue
		}
		return analysis.TextEdit{Pos: gd.Lparen + 1, End: gd.Lparen + 1, NewText: []byte("\n\t" + strconv.Quote(path))}, true
	}
	return analysis.TextEdit{}, false
}

func (c *checker) source(n ast.Node) (string, bool) {
	var b bytes.Buffer
	if err := format.Node(&b, c.pass.Fset, n); err != nil {
		return "", false
	}
	return b.String(), true
}

// jitterFix draws a wait's duration d at random from [0, d] (full
// jitter) with the file's own math/rand (v2 or v1), or with math/rand/v2
// imported for it. Only a direct time.Sleep, time.After, time.NewTimer or
// Timer.Reset is rewritten.
func (c *checker) jitterFix(call *ast.CallExpr) (analysis.SuggestedFix, bool) {
	f := c.fileOf(call.Pos())
	if f == nil || len(call.Args) != 1 {
		return analysis.SuggestedFix{}, false
	}
	if isFunc(c.callee(call), "time", "Sleep") && c.ctxName(call.Pos()) != "" {
		// deafwait's fix rewrites this statement whole; the jitter comes
		// on the next run, in its time.After.
		return analysis.SuggestedFix{}, false
	}
	arg := call.Args[0]
	d, ok := c.source(arg)
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	if _, simple := ast.Unparen(arg).(*ast.BinaryExpr); simple {
		d = "(" + d + ")"
	}
	var edits []analysis.TextEdit
	var text string
	if r := importName(f, "math/rand/v2"); r != "" {
		text = fmt.Sprintf("%s.N(%s + 1)", r, d)
	} else if r := importName(f, "math/rand"); r != "" {
		tp := importName(f, "time")
		if tp == "" {
			return analysis.SuggestedFix{}, false
		}
		text = fmt.Sprintf("%s.Duration(%s.Int63n(int64(%s) + 1))", tp, r, d)
	} else {
		if nameTaken(f, "rand", "") {
			return analysis.SuggestedFix{}, false
		}
		imp, ok := addImport(f, "math/rand/v2")
		if !ok {
			return analysis.SuggestedFix{}, false
		}
		edits = append(edits, imp)
		text = fmt.Sprintf("rand.N(%s + 1)", d)
	}
	edits = append(edits, analysis.TextEdit{Pos: arg.Pos(), End: arg.End(), NewText: []byte(text)})
	return analysis.SuggestedFix{Message: "draw the wait at random up to its duration (full jitter)", TextEdits: edits}, true
}

// boundFix makes an unbounded loop stop when the caller's context is
// done, leaving the way the function already leaves on cancellation (or
// with ctx.Err()).
func (c *checker) boundFix(s ast.Stmt, fc funcCtx, own *ast.BlockStmt) (analysis.SuggestedFix, bool) {
	fs, ok := s.(*ast.ForStmt)
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	ctx := c.ctxName(fs.Body.Lbrace + 1)
	if ctx == "" {
		return analysis.SuggestedFix{}, false
	}
	ret, ok := c.ownCancelReturn(own, fs.Pos())
	if !ok {
		ret, ok = c.returnOnDone(ctx, fc)
	}
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	ind := strings.Repeat("\t", max(c.pass.Fset.Position(fs.Pos()).Column, 1))
	check := fmt.Sprintf("if %s.Err() != nil {\n%s\t%s\n%s}", ctx, ind, ret, ind)
	edit := analysis.TextEdit{Pos: fs.Body.Lbrace + 1, End: fs.Body.Lbrace + 1, NewText: []byte("\n" + ind + check)}
	if len(fs.Body.List) > 0 {
		// Before the first statement, so a comment on the for line stays.
		p := fs.Body.List[0].Pos()
		edit = analysis.TextEdit{Pos: p, End: p, NewText: []byte(check + "\n" + ind)}
	}
	return analysis.SuggestedFix{Message: fmt.Sprintf("stop when %s is done", ctx), TextEdits: []analysis.TextEdit{edit}}, true
}
