package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func init() {
	register(command{"version", "print recoil's version, its source revision and the Go version", runVersion})
}

var versionHelp = help{
	usage: "recoil version",
	about: `
Prints the version of the recoil module this binary was built from — a
release's tag, a pseudo-version, or "(devel)" for a build without one — then
the source revision when the build recorded it (and whether the tree had
uncommitted changes), and the Go version and platform it was built with.
"recoil -version" does the same.`,
	examples: `  recoil version
  recoil -version`,
	exit: "0 done; 2 usage error.",
}

func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("version", stdout, versionHelp)
	if err := fs.parse(args); err != nil {
		return err
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	_, err := io.WriteString(stdout, versionText(bi, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH))
	return err
}

// versionText describes a build: the main module's version, "(devel)"
// when there is none; the VCS revision, if recorded; the Go version.
func versionText(bi *debug.BuildInfo, goVersion, platform string) string {
	version, rev, modified := "(devel)", "", false
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	out := "recoil " + version + "\n"
	if rev != "" {
		out += "revision " + rev
		if modified {
			out += " (with uncommitted changes)"
		}
		out += "\n"
	}
	return out + fmt.Sprintf("%s %s\n", goVersion, platform)
}
