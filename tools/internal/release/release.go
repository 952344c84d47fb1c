// Package release builds the repository's modules as they would be
// published: a Go module proxy in a directory, holding every module of the
// workspace at one version, made from the working tree. A test builds
// consumers outside the repository against it (with the workspace off), so
// what a user's `go get` would bring is measured, not assumed.
package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// Module is one module of the workspace.
type Module struct {
	Path string // the module path, from its go.mod
	Dir  string // its directory, absolute
}

// Workspace returns the modules that root's go.work uses, sorted by path.
func Workspace(root string) ([]Module, error) {
	name := filepath.Join(root, "go.work")
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork(name, b, nil)
	if err != nil {
		return nil, err
	}
	var mods []Module
	for _, u := range wf.Use {
		dir := filepath.Join(root, filepath.FromSlash(u.Path))
		gomod := filepath.Join(dir, "go.mod")
		b, err := os.ReadFile(gomod)
		if err != nil {
			return nil, err
		}
		path := modfile.ModulePath(b)
		if path == "" {
			return nil, fmt.Errorf("%s: no module line", gomod)
		}
		mods = append(mods, Module{Path: path, Dir: dir})
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("%s: uses no module", name)
	}
	slices.SortFunc(mods, func(a, b Module) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	return mods, nil
}

// Proxy writes every module in mods at version into dir laid out as a
// GOPROXY (usable as GOPROXY=file://dir): for each module its version list,
// .info, .mod (the go.mod as it stands; a consumer ignores its replace
// directives, as it would a published one's) and .zip, made by the same
// rules as the go command's (nested modules, vendor directories and
// oversized files left out).
func Proxy(dir, version string, mods []Module) error {
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		return err
	}
	for _, m := range mods {
		if err := module.Check(m.Path, version); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		mv := module.Version{Path: m.Path, Version: version}
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return err
		}
		gomod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
		if err != nil {
			return err
		}
		files := map[string][]byte{
			"list":            []byte(version + "\n"),
			version + ".info": info,
			version + ".mod":  gomod,
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(vdir, name), b, 0o644); err != nil {
				return err
			}
		}
		f, err := os.Create(filepath.Join(vdir, version+".zip"))
		if err != nil {
			return err
		}
		err = zip.CreateFromDir(f, mv, m.Dir)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("release: zip %s: %w", mv, err)
		}
	}
	return nil
}
