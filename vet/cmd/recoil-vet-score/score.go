package main

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/recoil-go/recoil/vet/retryloop"
)

// result is one labelled function and what the analyzer reported in it.
type result struct {
	labelled
	got  map[string]string // check -> first message
	fail string            // why it could not be scored
	// crash is set when the analyzer crashed while vetting the module (a
	// package of it or a dependency): scored, but maybe without facts
	crash string
}

// scoreAll vets every module the cases name, once per module, and finds
// each case's findings.
func scoreAll(cases []labelled, vettool, work string, log io.Writer) ([]result, error) {
	byMod := map[string][]labelled{}
	for _, c := range cases {
		byMod[c.module] = append(byMod[c.module], c)
	}
	var out []result
	for _, mod := range sortedKeys(byMod) {
		cs := byMod[mod]
		fail := func(why string) {
			for _, c := range cs {
				out = append(out, result{labelled: c, fail: why})
			}
		}
		dir, err := download(mod, work)
		if err == nil {
			dir, err = filepath.Abs(dir) // go list prints absolute directories
		}
		if err != nil {
			fail(err.Error())
			fmt.Fprintf(log, "%s: %v\n", mod, err)
			continue
		}
		var pkgs []string
		for _, c := range cs {
			p := "./" + filepath.ToSlash(c.pkg)
			if c.pkg == "." {
				p = "."
			}
			if !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
		findings, problems, skipped, err := vet(dir, vettool, pkgs)
		if err != nil {
			fail(err.Error())
			continue
		}
		if len(problems) > 0 {
			fmt.Fprintf(log, "%s: go vet said:\n\t%s\n", mod, strings.Join(problems[:min(len(problems), 5)], "\n\t"))
		}
		crash := crashLine(problems)
		for _, c := range cs {
			r := result{labelled: c, got: map[string]string{}, crash: crash}
			if why, ok := skipped[filepath.Join(dir, filepath.FromSlash(c.pkg))]; ok {
				r.fail = why
				fmt.Fprintf(log, "%s %s %s %s: not scored, %s\n", c.split, c.module, c.pkg, c.fn, why)
				out = append(out, r)
				continue
			}
			sp, err := findFunc(filepath.Join(dir, filepath.FromSlash(c.pkg)), c.fn)
			if err != nil {
				r.fail = err.Error()
				out = append(out, r)
				continue
			}
			for _, f := range findings {
				if f.file == sp.file && f.line >= sp.first && f.line <= sp.last {
					if _, ok := r.got[f.check]; !ok {
						r.got[f.check] = fmt.Sprintf("line %d: %s", f.line, f.msg)
					}
				}
			}
			fmt.Fprintf(log, "%s %s %s %s: want %v, got %v\n", c.split, c.module, c.pkg, c.fn, c.want, sortedKeys(r.got))
			out = append(out, r)
		}
	}
	return out, nil
}

// counts are one check's confusion counts.
type counts struct{ TP, FP, FN, TN int }

func ratio(a, b int) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// printTable prints one split's precision and recall per check.
func printTable(w io.Writer, split string, rs []result, verbose bool) {
	by := map[string]*counts{}
	for _, c := range retryloop.Checks {
		by[c] = &counts{}
	}
	n, failed := 0, 0
	mods := map[string]bool{}
	var notes []string
	for _, r := range rs {
		if r.split != split {
			continue
		}
		if r.fail != "" {
			failed++
			notes = append(notes, fmt.Sprintf("unscored %s %s %s: %s", r.module, r.pkg, r.fn, r.fail))
			continue
		}
		n++
		mods[r.module] = true
		for _, c := range retryloop.Checks {
			want := slices.Contains(r.want, c)
			msg, got := r.got[c]
			k := by[c]
			switch {
			case want && got:
				k.TP++
			case want:
				k.FN++
				notes = append(notes, fmt.Sprintf("missed %-12s %s %s", c, r.module, r.fn))
			case got:
				k.FP++
				notes = append(notes, fmt.Sprintf("false  %-12s %s %s (%s)", c, r.module, r.fn, msg))
			default:
				k.TN++
			}
		}
	}
	fmt.Fprintf(w, "\n%s: %d functions from %d modules scored", split, n, len(mods))
	if failed > 0 {
		fmt.Fprintf(w, ", %d not scored", failed)
	}
	if crashed := crashedModules(rs, split); len(crashed) > 0 {
		fmt.Fprintf(w, "\nWARNING: the analyzer crashed while vetting %d of them (a package or a dependency; their scores may lack facts): %s",
			len(crashed), strings.Join(crashed, ", "))
	}
	fmt.Fprintf(w, "\n\n| check | TP | FP | FN | TN | precision | recall |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range retryloop.Checks {
		if c == retryloop.CheckStacked {
			continue // no real code in the corpus builds a stacked client
		}
		k := by[c]
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %s | %s |\n", c, k.TP, k.FP, k.FN, k.TN, ratio(k.TP, k.TP+k.FP), ratio(k.TP, k.TP+k.FN))
	}
	if verbose {
		for _, s := range notes {
			fmt.Fprintln(w, s)
		}
	}
}

// runSweep vets whole modules and prints their findings and line counts.
func runSweep(path, vettool, work string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var mods []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			mods = append(mods, strings.Fields(line)[0])
		}
	}
	totalLines, totalFindings := 0, 0
	for _, mod := range mods {
		dir, err := download(mod, work)
		if err == nil {
			dir, err = filepath.Abs(dir)
		}
		if err != nil {
			fmt.Fprintf(w, "%s: %v\n", mod, err)
			continue
		}
		lines, err := goLines(dir)
		if err != nil {
			return err
		}
		findings, problems, skipped, err := vet(dir, vettool, []string{"./..."})
		if err != nil {
			return err
		}
		totalLines += lines
		totalFindings += len(findings)
		own := 0 // the module's own packages go vet could not check
		for d := range skipped {
			if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
				own++
			}
		}
		fmt.Fprintf(w, "%s: %d non-test lines, %d findings, %d packages not vetted, %d lines of other output\n", mod, lines, len(findings), own, len(problems))
		for _, f := range findings {
			rel, _ := filepath.Rel(dir, f.file)
			fmt.Fprintf(w, "\t%s:%d: %s: %s\n", rel, f.line, f.check, f.msg)
		}
	}
	fmt.Fprintf(w, "total: %d findings in %d lines (%.2f per 10,000)\n", totalFindings, totalLines, float64(totalFindings)*10000/float64(max(totalLines, 1)))
	return nil
}

// goLines counts the lines of the non-test Go files go vet ./... checks
// (testdata, vendor and directories starting with _ or . left out).
func goLines(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if path != dir {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module is not part of ./...
				}
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n += strings.Count(string(b), "\n")
		return nil
	})
	return n, err
}

// crashLine returns the first line of go vet's output that says the
// analyzer crashed (a Go runtime fatal error or panic), or "".
func crashLine(problems []string) string {
	for _, p := range problems {
		for _, l := range strings.Split(p, "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "fatal error:") || strings.HasPrefix(t, "panic:") {
				return t
			}
		}
	}
	return ""
}

// crashedModules returns, sorted, the modules of split whose vetting
// crashed.
func crashedModules(rs []result, split string) []string {
	var out []string
	for _, r := range rs {
		if r.split == split && r.crash != "" && !slices.Contains(out, r.module) {
			out = append(out, r.module)
		}
	}
	slices.Sort(out)
	return out
}
