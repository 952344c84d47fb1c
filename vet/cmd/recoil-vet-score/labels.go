package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/recoil-go/recoil/vet/retryloop"
)

// splits are the parts of the corpus, in the order their tables are
// printed: train, looked at while improving the analyzer; heldout, held out
// at first but since seen; fresh to fresh97, each labelled
// by a labeller who never ran the analyzer, from modules in no earlier split.
var splits = []string{"train", "heldout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15", "fresh16", "fresh17", "fresh18", "fresh19", "fresh20", "fresh21", "fresh22", "fresh23", "fresh24", "fresh25", "fresh26", "fresh27", "fresh28", "fresh29", "fresh30", "fresh31", "fresh32", "fresh33", "fresh34", "fresh35", "fresh36", "fresh37", "fresh38", "fresh39", "fresh40", "fresh41", "fresh42", "fresh43", "fresh44", "fresh45", "fresh46", "fresh47", "fresh48", "fresh49", "fresh50", "fresh51", "fresh52", "fresh53", "fresh54", "fresh55", "fresh56", "fresh57", "fresh58", "fresh59", "fresh60", "fresh61", "fresh62", "fresh63", "fresh64", "fresh65", "fresh66", "fresh67", "fresh68", "fresh69", "fresh70", "fresh71", "fresh72", "fresh73", "fresh74", "fresh75", "fresh76", "fresh77", "fresh78", "fresh79", "fresh80", "fresh81", "fresh82", "fresh83", "fresh84", "fresh85", "fresh86", "fresh87", "fresh88", "fresh89", "fresh90", "fresh91", "fresh92", "fresh93", "fresh94", "fresh95", "fresh96", "fresh97"}

// splitNames lists the splits for the -split help, so that adding a split to
// splits is the only edit a new part needs.
func splitNames() string {
	return strings.Join(splits[:len(splits)-1], ", ") + " or " + splits[len(splits)-1]
}

// labelled is one line of the labels file.
type labelled struct {
	split  string   // one of splits
	module string   // module@version
	pkg    string   // package directory inside the module, "." for the root
	fn     string   // Name or Recv.Name
	want   []string // the checks a reviewer reports; empty for clean
	line   int      // in its labels file
}

// readLabels reads the corpus at path: a labels file, or a directory
// whose *.txt files are read in name order as one (the corpus is kept in
// several, none past what a reviewer reads in one sitting). A function
// labelled twice is refused across files as within one.
func readLabels(path string) ([]labelled, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if fi.IsDir() {
		if files, err = filepath.Glob(filepath.Join(path, "*.txt")); err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no *.txt labels file in it", path)
		}
		slices.Sort(files)
	}
	var out []labelled
	seen := map[string]string{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		cs, err := parseInto(f, filepath.Base(name), seen)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// parseInto reads one labels file, called name in errors: "# " comments,
// blank lines, and "<split> <module@version> <pkg> <function> <labels...>
// -- <why>". seen holds the functions labelled so far and where, shared
// across files.
func parseInto(r io.Reader, name string, seen map[string]string) ([]labelled, error) {
	var out []labelled
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		at := fmt.Sprintf("%s:%d", name, n)
		text, _, _ := strings.Cut(sc.Text(), " -- ")
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) < 5 {
			return nil, fmt.Errorf("%s: want <split> <module@version> <pkg> <function> <labels>, got %q", at, text)
		}
		l := labelled{split: f[0], module: f[1], pkg: f[2], fn: f[3], line: n}
		if !slices.Contains(splits, l.split) {
			return nil, fmt.Errorf("%s: split %q: want one of %s", at, l.split, strings.Join(splits, ", "))
		}
		if !strings.Contains(l.module, "@") {
			return nil, fmt.Errorf("%s: %q names no version", at, l.module)
		}
		for _, c := range f[4:] {
			switch {
			case c == "clean" && len(f) == 5:
			case slices.Contains(retryloop.Checks, c):
				l.want = append(l.want, c)
			default:
				return nil, fmt.Errorf("%s: unknown label %q (clean, or some of %s)", at, c, strings.Join(retryloop.Checks, ", "))
			}
		}
		key := l.module + " " + l.pkg + " " + l.fn
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("%s: %s is labelled already at %s", at, key, prev)
		}
		seen[key] = at
		out = append(out, l)
	}
	return out, sc.Err()
}

func filterSplit(cs []labelled, split string) []labelled {
	var out []labelled
	for _, c := range cs {
		if c.split == split {
			out = append(out, c)
		}
	}
	return out
}

// span is where a function sits: its file and its first and last lines.
type span struct {
	file        string
	first, last int
}

// findFunc finds the declaration of name (Name or Recv.Name) among the
// non-test Go files of dir.
func findFunc(dir, name string) (span, error) {
	recv, fn, isMethod := strings.Cut(name, ".")
	if !isMethod {
		fn, recv = recv, ""
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return span{}, err
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return span{}, err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != fn || receiverName(fd) != recv {
				continue
			}
			if ok, err := build.Default.MatchFile(dir, filepath.Base(path)); err == nil && !ok {
				// go vet never sees it: counting it as found clean
				// would score a function the analyzer was not shown.
				return span{}, fmt.Errorf("%s is in %s, which build constraints leave out of the build go vet checks", name, filepath.Base(path))
			}
			return span{file: filepath.Clean(path), first: fset.Position(fd.Pos()).Line, last: fset.Position(fd.End()).Line}, nil
		}
	}
	return span{}, fmt.Errorf("no function %s in %s", name, dir)
}

// receiverName is the name of a method's receiver type, without pointer
// or type parameters; "" for a function.
func receiverName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
