package release

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/recoil-go/recoil/internal/testsvc"
)

const recoil = "github.com/recoil-go/recoil"

// repoRoot is the repository's root, where go.work is.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("no go.work at the repository's root: %v", err)
	}
	return root
}

// nextVersion is the one version every nested module requires its
// siblings at: the version all of them will be tagged with next.
func nextVersion(t *testing.T, mods []Module) string {
	t.Helper()
	version := ""
	for _, m := range mods {
		name := filepath.Join(m.Dir, "go.mod")
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.Parse(name, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		replaced := map[string]string{}
		for _, r := range f.Replace {
			replaced[r.Old.Path] = r.New.Path
		}
		for _, r := range f.Require {
			if r.Mod.Path != recoil && !strings.HasPrefix(r.Mod.Path, recoil+"/") {
				continue
			}
			if version == "" {
				version = r.Mod.Version
			}
			if r.Mod.Version != version {
				t.Errorf("%s requires %s at %s, others at %s: every module is tagged with one number", name, r.Mod.Path, r.Mod.Version, version)
			}
			dir, ok := replaced[r.Mod.Path]
			if !ok {
				t.Errorf("%s requires %s with no replace: a clone could not build it before the tag", name, r.Mod.Path)
				continue
			}
			if want := dirOf(mods, r.Mod.Path); want == "" || filepath.Join(m.Dir, dir) != want {
				t.Errorf("%s replaces %s with %s, which is not that module's directory", name, r.Mod.Path, dir)
			}
		}
	}
	if version == "" {
		t.Fatal("no module requires another: nothing says which version comes next")
	}
	return version
}

func dirOf(mods []Module, path string) string {
	for _, m := range mods {
		if m.Path == path {
			return m.Dir
		}
	}
	return ""
}

// TestVersionsAgree holds the layout RELEASING.md describes: each nested
// module requires its siblings at one version, with a replace for
// development.
func TestVersionsAgree(t *testing.T) {
	mods, err := Workspace(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if v := nextVersion(t, mods); !strings.HasPrefix(v, "v0.") && !strings.HasPrefix(v, "v1.") {
		t.Errorf("next version %s: a v2 or later needs a /v2 module path", v)
	}
}

// consumer is a module outside the repository that imports some of its
// packages, with the go command's environment set to resolve recoil from
// the proxy built from the working tree and everything else from the
// module cache (or the network's proxy).
type consumer struct {
	t   *testing.T
	dir string
	env []string
}

func (c consumer) run(args ...string) string {
	c.t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = c.dir
	cmd.Env = c.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	c.t.Logf("go %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	if err != nil {
		c.t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// newConsumer writes a module requiring reqs that imports pkgs, tidies it
// and, if build is set, builds it, and returns it.
func newConsumer(t *testing.T, env []string, reqs, pkgs []string, build bool) consumer {
	t.Helper()
	dir := t.TempDir()
	var mod strings.Builder
	mod.WriteString("module example.com/consumer\n\ngo 1.26.0\n")
	for _, r := range reqs {
		fmt.Fprintf(&mod, "\nrequire %s\n", strings.Replace(r, "@", " ", 1))
	}
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, p := range pkgs {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n\nfunc main() {}\n")
	for name, b := range map[string]string{"go.mod": mod.String(), "main.go": src.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := consumer{t: t, dir: dir, env: env}
	c.run("mod", "tidy")
	if build {
		c.run("build", "./...")
	}
	return c
}

// graph is a consumer's `go list -m all`, without the consumer itself.
func (c consumer) graph() []string {
	lines := strings.Split(strings.TrimSpace(c.run("list", "-m", "all")), "\n")
	return slices.DeleteFunc(lines, func(l string) bool { return l == "example.com/consumer" })
}

// TestConsumers builds consumers outside the repository, with the workspace
// off, against the modules as they would be published, and checks what
// each brings into the consumer's module graph: the core, no third-party
// module at all; an adapter, only what the packages it imports need —
// measured as the graph of a second consumer that imports those packages
// (and the few its tests use, each listed with why) directly, at the
// versions the adapter requires.
//
// It fills a fresh module cache and builds every adapter's dependencies
// (minutes, five of them cold), so it runs under RECOIL_LONG=1 only.
func TestConsumers(t *testing.T) {
	testsvc.SkipUnlessLong(t, "building consumers against a module proxy made from the working tree (minutes)")
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	root := repoRoot(t)
	mods, err := Workspace(root)
	if err != nil {
		t.Fatal(err)
	}
	version := nextVersion(t, mods)
	proxy := t.TempDir()
	start := time.Now()
	if err := Proxy(proxy, version, mods); err != nil {
		t.Fatal(err)
	}
	t.Logf("proxy of %d modules at %s: %v", len(mods), version, time.Since(start).Round(time.Millisecond))
	cache := strings.TrimSpace(string(must(exec.Command("go", "env", "GOMODCACHE").Output())))
	upstream := strings.TrimSuffix(strings.TrimSpace(string(must(exec.Command("go", "env", "GOPROXY").Output()))), ",direct") // nothing is fetched from a VCS
	env := append(os.Environ(),
		"GOWORK=off",
		"GOFLAGS=-mod=mod -modcacherw -trimpath", // -trimpath: the build cache serves later runs, whatever GOMODCACHE is
		"GOTOOLCHAIN=local",
		// recoil from the working tree; everything else from this machine's
		// module cache when it is there, else from the usual proxy.
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(cache, "cache", "download"))+","+upstream,
		"GONOSUMDB="+recoil,       // the checksum database has never seen these zips; everything else is checked
		"GOMODCACHE="+t.TempDir(), // fresh: a cached v0.1.0 from an earlier run would be stale
	)

	t.Run("core", func(t *testing.T) {
		c := newConsumer(t, env, []string{recoil + "@" + version}, []string{
			recoil, recoil + "/backoff", recoil + "/budget", recoil + "/breaker", recoil + "/limit",
			recoil + "/hop", recoil + "/recoilhttp", recoil + "/idempotency",
		}, true)
		g := c.graph()
		t.Logf("go list -m all of a consumer of the core:\n%s", strings.Join(g, "\n"))
		sum, err := os.ReadFile(filepath.Join(c.dir, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(sum)), "\n")
		t.Logf("its go.sum: %d lines", len(lines))
		for _, l := range lines {
			if !strings.HasPrefix(l, recoil+" ") {
				t.Errorf("go.sum of a consumer of the core holds %q", l)
			}
		}
		if want := []string{recoil + " " + version}; !slices.Equal(g, want) {
			t.Errorf("the core brings %q, want only %q", g, want)
		}
	})

	adapters := []struct {
		module string   // under recoil
		pkgs   []string // under recoil
		// tests lists third-party packages only the adapter's tests
		// import, each with why: what they bring counts as the adapter's
		// own. Anything else in its graph is a failure.
		tests map[string]string
	}{
		{"recoilgrpc", []string{"recoilgrpc", "recoilgrpc/idemgrpc"}, nil},
		{"recoilotel", []string{"recoilotel", "recoilotel/grpcotel"}, map[string]string{
			"go.opentelemetry.io/otel/sdk/trace/tracetest": "its tests record spans with the OpenTelemetry SDK",
			"go.opentelemetry.io/otel/sdk/metric":          "its tests read metrics with the OpenTelemetry SDK",
		}},
		{"recoilprom", []string{"recoilprom"}, map[string]string{
			"github.com/prometheus/client_golang/prometheus/testutil": "its tests read the collected metrics",
		}},
		{"fleet", []string{"fleet"}, nil},
		{"idempotency/redisstore", []string{"idempotency/redisstore"}, nil},
		{"idempotency/pgstore", []string{"idempotency/pgstore"}, nil},
		{"sdk", []string{"sdk"}, nil},
		{"tools/policyspec", []string{"tools/policyspec", "tools/policyspec/strictyaml"}, nil},
		{"proxy", []string{"proxy"}, nil},
	}
	for _, a := range adapters {
		t.Run(a.module, func(t *testing.T) {
			var pkgs []string
			for _, p := range a.pkgs {
				pkgs = append(pkgs, recoil+"/"+p)
			}
			c := newConsumer(t, env, []string{recoil + "/" + a.module + "@" + version}, pkgs, true)
			got := c.graph()
			t.Logf("go list -m all of a consumer of %s:\n%s", a.module, strings.Join(got, "\n"))

			// The third-party packages the adapter imports, and the
			// modules (at the versions selected) that provide them.
			var third []string
			for _, imp := range strings.Fields(c.run(append([]string{"list", "-f", `{{join .Imports " "}}`}, pkgs...)...)) {
				if !strings.HasPrefix(imp, recoil) && strings.Contains(strings.Split(imp, "/")[0], ".") && !slices.Contains(third, imp) {
					third = append(third, imp)
				}
			}
			if len(third) == 0 {
				t.Fatalf("%s imports no third-party package: it belongs in the core module", a.module)
			}
			for pkg, why := range a.tests {
				t.Logf("also %s: %s", pkg, why)
				third = append(third, pkg)
			}
			var reqs []string
			for _, mv := range strings.Fields(c.run(append([]string{"list", "-e", "-f", `{{with .Module}}{{.Path}}@{{.Version}}{{end}}`}, third...)...)) {
				if !slices.Contains(reqs, mv) {
					reqs = append(reqs, mv)
				}
			}
			ref := newConsumer(t, env, reqs, third, false).graph()

			for _, line := range got {
				path, _, _ := strings.Cut(line, " ")
				if path == recoil || strings.HasPrefix(path, recoil+"/") || slices.Contains(ref, line) {
					continue
				}
				if i := slices.IndexFunc(ref, func(r string) bool { return strings.HasPrefix(r, path+" ") }); i >= 0 {
					t.Errorf("%s raises %s to %s", a.module, ref[i], line)
				} else {
					t.Errorf("%s brings %s, which none of %v needs", a.module, line, third)
				}
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
