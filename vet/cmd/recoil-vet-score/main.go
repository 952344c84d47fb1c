// Command recoil-vet-score scores recoil-vet on a corpus of real code kept
// by reference: each line of the labels (corpus/labels/*.txt) names a public
// module's function at a pinned version and the checks a careful reviewer
// reports in it. The command downloads each module (go mod download, into
// the module cache), copies it to a scratch directory, runs go vet with
// recoil-vet on the named packages, and counts, per check, a true positive
// when a labelled check is reported inside the function, a false positive
// when an unlabelled one is, and a false negative when a labelled one is
// not.
//
// From the vet module's directory:
//
//	go run ./cmd/recoil-vet-score                 # every split, one table each
//	go run ./cmd/recoil-vet-score -split train -v # one split, every miss named
//	go run ./cmd/recoil-vet-score -vettool /tmp/old-recoil-vet
//
// With -sweep it runs instead over whole modules (one module@version a
// line in the named file) and prints every finding with the module's count
// of non-test Go lines, for judging false findings per 10,000 lines.
//
// Nothing it downloads is written into the repository. It needs the go
// command and the Go module proxy; it takes minutes, because go vet
// compiles each module's dependencies once.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/recoil-go/recoil/vet/retryloop"
)

func main() {
	labels := flag.String("labels", "corpus/labels", "the labels: a directory of *.txt files read in name order, or one file")
	vettool := flag.String("vettool", "", "a recoil-vet binary (default: build ./cmd/recoil-vet)")
	split := flag.String("split", "", "score only this split ("+splitNames()+")")
	work := flag.String("work", filepath.Join(os.TempDir(), "recoil-vet-corpus"), "scratch directory for the modules' copies")
	verbose := flag.Bool("v", false, "name every miss and false finding")
	sweep := flag.String("sweep", "", "a file of module@version lines: vet each whole module and print its findings")
	only := flag.String("module", "", "score only the modules whose path contains this")
	flag.Parse()
	if err := run(*labels, *vettool, *split, *work, *sweep, *only, *verbose, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "recoil-vet-score:", err)
		os.Exit(1)
	}
}

func run(labelsPath, vettool, split, work, sweep, only string, verbose bool, out io.Writer) error {
	if split != "" && !slices.Contains(splits, split) {
		return fmt.Errorf("-split %q: want one of %s", split, strings.Join(splits, ", "))
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	if vettool == "" {
		bin, err := buildTool(work)
		if err != nil {
			return err
		}
		vettool = bin
	}
	tool, err := ownTool(vettool, work)
	if err != nil {
		return err
	}
	defer os.Remove(tool)
	vettool = tool
	if sweep != "" {
		return runSweep(sweep, vettool, work, out)
	}
	cases, err := readLabels(labelsPath)
	if err != nil {
		return err
	}
	if split != "" {
		cases = filterSplit(cases, split)
	}
	if only != "" {
		var kept []labelled
		for _, c := range cases {
			if strings.Contains(c.module, only) {
				kept = append(kept, c)
			}
		}
		cases = kept
	}
	results, err := scoreAll(cases, vettool, work, out)
	if err != nil {
		return err
	}
	for _, sp := range splits {
		if split != "" && sp != split {
			continue
		}
		printTable(out, sp, results, verbose)
	}
	return nil
}

// buildTool builds recoil-vet from this module into dir.
func buildTool(dir string) (string, error) {
	bin := filepath.Join(dir, "recoil-vet")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/recoil-vet")
	// Outside the repository's workspace, so the tool is built with the
	// vet module's own golang.org/x/tools (see docs/vet.md, "Install from
	// a clone"): in the workspace it is raised to a version whose go vet
	// driver cannot vet some modules of the corpus.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building recoil-vet (run from the vet module's directory): %v\n%s", err, b)
	}
	return bin, nil
}

// download fetches mod@version into the module cache and copies it to a
// writable directory under work, returning that directory.
func download(modVer, work string) (string, error) {
	dst := filepath.Join(work, strings.NewReplacer("/", "_", "@", "_").Replace(modVer))
	if _, err := os.Stat(filepath.Join(dst, "go.mod")); err == nil {
		return dst, nil
	}
	b, err := exec.Command("go", "mod", "download", "-json", modVer).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %v", modVer, err)
	}
	dir := jsonField(string(b), "Dir")
	if dir == "" {
		return "", fmt.Errorf("go mod download %s: no Dir in %s", modVer, b)
	}
	if err := os.RemoveAll(dst); err != nil {
		return "", err
	}
	if err := copyTree(dir, dst); err != nil {
		return "", err
	}
	if err := dropLocalReplaces(dst); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dst, "go.mod")); errors.Is(err, os.ErrNotExist) {
		path, _, _ := strings.Cut(modVer, "@")
		if ok, err := adoptVendorMod(dst, path); err != nil || ok {
			return dst, err
		}
		// A +incompatible module has no go.mod: give it one and let the go
		// command find its dependencies.
		if err := os.WriteFile(filepath.Join(dst, "go.mod"), []byte("module "+path+"\n\ngo 1.16\n"), 0o644); err != nil {
			return "", err
		}
		tidy := exec.Command("go", "mod", "tidy", "-e")
		tidy.Dir, tidy.Env = dst, goEnv()
		if b, err := tidy.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go mod tidy in %s: %v\n%s", modVer, err, b)
		}
	}
	return dst, nil
}

// adoptVendorMod gives a module without a go.mod the requirements it keeps
// in vendor.mod and vendor.sum, as moby's (docker/docker's) build does
// before it calls the go command, and reports whether there was one. The
// go command then resolves them from the proxy (-mod=mod), as it would
// from a go.mod: the copy leaves the vendor directory out, which the
// module's zip holds only in part.
func adoptVendorMod(dir, path string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "vendor.mod"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	req := regexp.MustCompile(`(?m)^module\s.*$`).ReplaceAllString(string(b), "")
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+path+"\n"+req), 0o644); err != nil {
		return false, err
	}
	sum, err := os.ReadFile(filepath.Join(dir, "vendor.sum"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	return true, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
}

// dropLocalReplaces removes the go.mod replace directives that point at
// directories of the module's own repository (../../api): outside that
// repository the required versions from the proxy stand instead.
func dropLocalReplaces(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil
	}
	for _, old := range localReplaces(string(b)) {
		cmd := exec.Command("go", "mod", "edit", "-dropreplace="+old)
		cmd.Dir, cmd.Env = dir, goEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go mod edit -dropreplace=%s: %v\n%s", old, err, out)
		}
	}
	return nil
}

// localReplaceRE matches a replace directive, in a block or on its own
// line, whose new path is a directory (./x or ../x).
var localReplaceRE = regexp.MustCompile(`(?m)^\s*(?:replace\s+)?([^\s(]+)(?:\s+(v\S+))?\s+=>\s+\.\.?/`)

// localReplaces returns, in go mod edit -dropreplace's form, the old side
// of each of gomod's replace directives that point at a directory: path,
// or path@version for one that names a version (-dropreplace=path leaves
// that one in place).
func localReplaces(gomod string) []string {
	var out []string
	for _, m := range localReplaceRE.FindAllStringSubmatch(gomod, -1) {
		if m[2] != "" {
			out = append(out, m[1]+"@"+m[2])
		} else {
			out = append(out, m[1])
		}
	}
	return out
}

var jsonFieldRE = regexp.MustCompile(`"(\w+)":\s*"((?:[^"\\]|\\.)*)"`)

func jsonField(s, name string) string {
	for _, m := range jsonFieldRE.FindAllStringSubmatch(s, -1) {
		if m[1] == name {
			return strings.ReplaceAll(m[2], `\\`, `\`)
		}
	}
	return ""
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if rel == "vendor" {
				return filepath.SkipDir // -mod=mod: the go command reads no vendor directory
			}
			return os.MkdirAll(target, 0o755)
		}
		// Test files are left out: the labels name no function in one, the
		// analyzer reports none in one, and a test file that no longer
		// compiles (an unused variable the type checker of an older Go let
		// pass) would keep go vet from the package's other files.
		if !d.Type().IsRegular() || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// goEnv is the environment go vet runs in: the module on its own, free to
// add what its go.sum lacks, on this machine's Go.
func goEnv() []string {
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
}

// finding is one diagnostic of go vet's text output.
type finding struct {
	file  string // absolute
	line  int
	check string
	msg   string
}

var diagRE = regexp.MustCompile(`^(.+\.go):(\d+):\d+: (\w+): (.*)$`)

// vet runs go vet with the tool on pkgs (patterns relative to dir) and
// returns the findings and any line that says a package failed to load.
func vet(dir, vettool string, pkgs []string) ([]finding, []string, map[string]string, error) {
	// Resolve the packages' dependencies first (-mod=mod records what
	// go.sum lacks). A go vet that had to complete go.sum itself was seen
	// to report nothing for a module (docker/docker from its vendor.mod),
	// and go vet caches that empty result for the same tool and sources.
	list := exec.Command("go", append([]string{"list", "-e", "-deps", "-f", listFormat}, pkgs...)...)
	list.Dir, list.Env = dir, goEnv()
	lb, err := list.Output()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("go list -deps in %s: %v", dir, err)
	}
	args := append([]string{"vet", "-vettool=" + vettool}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, goEnv()
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return nil, nil, nil, err
	}
	var fs []finding
	var problems []string
	broken := map[string]string{} // a package that did not compile: its first error
	header := ""                  // the package go vet's last "# path" line names
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "# "); ok {
			header, _, _ = strings.Cut(h, " ")
			continue
		}
		if m := diagRE.FindStringSubmatch(line); m != nil && !slices.Contains(retryloop.Checks, m[3]) {
			// "stubs.go:33:22: undefined: GoMapIterator": the compiler's,
			// not the analyzer's; what imports that package is not vetted
			if _, seen := broken[header]; header != "" && !seen {
				broken[header] = line
			}
			problems = append(problems, line)
			continue
		}
		if m := diagRE.FindStringSubmatch(line); m != nil {
			var n int
			fmt.Sscan(m[2], &n)
			file := m[1]
			if !filepath.IsAbs(file) {
				file = filepath.Join(dir, file)
			}
			fs = append(fs, finding{file: filepath.Clean(file), line: n, check: m[3], msg: m[4]})
			continue
		}
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" || strings.HasPrefix(line, "go: downloading") {
			continue
		}
		problems = append(problems, line)
	}
	return fs, problems, unvetted(string(lb), problems, broken), nil
}

// listFormat is what vet asks go list of each package: its import path,
// its directory, whether it or a dependency could not be loaded, and its
// dependencies.
const listFormat = "{{.ImportPath}}\t{{.Dir}}\t{{if .Error}}{{.Error}}{{else if .DepsErrors}}{{(index .DepsErrors 0)}}{{end}}\t{{join .Deps \" \"}}"

// unvetted maps the directory of each package go vet did not check to why:
// a package that go list could not load (it or a dependency: a module the
// proxy does not serve, cgo), one that did not compile or imports one that
// did not (broken: a dependency's type error under the Go release here),
// or one for which the vet tool itself exited with an error (go vet prints
// "<import path>: <tool>: exit status N"). Its functions are left out of
// the score rather than counted as found clean.
func unvetted(listed string, problems []string, broken map[string]string) map[string]string {
	out := map[string]string{}
	for line := range strings.Lines(listed) {
		f := strings.SplitN(strings.TrimRight(line, "\n"), "\t", 4)
		if len(f) < 3 || f[1] == "" {
			continue
		}
		ip, d, why := f[0], filepath.Clean(f[1]), f[2]
		if why != "" {
			out[d] = "not loaded: " + firstLine(why)
			continue
		}
		if e, ok := broken[ip]; ok {
			out[d] = "not compiled: " + e
			continue
		}
		if len(f) == 4 {
			for dep := range strings.FieldsSeq(f[3]) {
				if e, ok := broken[dep]; ok {
					out[d] = "not compiled: " + dep + ": " + e
					break
				}
			}
			if out[d] != "" {
				continue
			}
		}
		for _, p := range problems {
			if strings.HasPrefix(p, ip+": ") && strings.Contains(p, "exit status") {
				out[d] = "not vetted: " + p
				break
			}
		}
	}
	return out
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
