package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// output is a file a command writes when its work is done (-o, -csv).
//
// checkOutput is called before the work starts, so that a path that cannot
// be written is a usage error and not a failure after a long run; write
// writes to a temporary file in the same directory and renames it over the
// path only once everything was written, so a failure — of the write, of
// the command, an interruption — never leaves a partial or empty file.
type output struct {
	flag string // "-o", for messages
	path string // as given
	real string // path with symlinks resolved: what is replaced
	// direct is set for an existing file that is not a regular one
	// (/dev/stdout, a named pipe): written in place, never replaced.
	direct bool
}

// checkOutput checks, for the flag named flagName, that path can be
// written: its directory exists and a file can be created in it, and it is
// not a directory. It returns a usage error naming the flag if not. An
// empty path gives a nil output.
func checkOutput(flagName, path string) (*output, error) {
	if path == "" {
		return nil, nil
	}
	o := &output{flag: flagName, path: path, real: path}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		o.real = r
	}
	fi, err := os.Stat(o.real)
	switch {
	case err == nil && fi.IsDir():
		return nil, usagef("%s %s: is a directory", flagName, path)
	case err == nil && !fi.Mode().IsRegular():
		o.direct = true
		return o, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, usagef("%s %s: %v", flagName, path, pathErr(err))
	}
	dir := filepath.Dir(o.real)
	if di, err := os.Stat(dir); err != nil || !di.IsDir() {
		return nil, usagef("%s %s: directory %s does not exist", flagName, path, dir)
	}
	probe, err := os.CreateTemp(dir, ".recoil-probe-*")
	if err != nil {
		return nil, usagef("%s %s: cannot create a file in %s: %v", flagName, path, dir, pathErr(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return o, nil
}

// write writes the file through write: into a temporary file beside it,
// renamed over it when write and the close succeeded, removed otherwise.
// A nil output writes nothing.
func (o *output) write(write func(io.Writer) error) error {
	if o == nil {
		return nil
	}
	if o.direct {
		f, err := os.OpenFile(o.real, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", o.path, err)
		}
		return f.Close()
	}
	dir, base := filepath.Split(o.real)
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(o.real); err == nil {
		mode = fi.Mode().Perm() // replacing a file keeps its permissions
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := write(tmp); err != nil {
		return fmt.Errorf("%s: %w", o.path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", o.path, err)
	}
	if err := os.Rename(tmp.Name(), o.real); err != nil {
		return err
	}
	done = true
	return nil
}

// pathErr drops the operation and path from a *fs.PathError, which the
// message around it already names.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// chartFormat returns "svg" or "png" for a chart's file name, or a usage
// error naming the flag.
func chartFormat(flagName, path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return "svg", nil
	case ".png":
		return "png", nil
	}
	return "", usagef("%s %s: a chart's name ends in .svg or .png", flagName, path)
}
