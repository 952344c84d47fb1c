package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o500); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
		skip             bool
	}{
		{"no directory", filepath.Join(dir, "none", "x.svg"), "does not exist", false},
		{"a file for a directory", filepath.Join(file, "x.svg"), "not a directory", false},
		{"a directory", dir, "is a directory", false},
		// root may write anywhere; the kernel's files refuse it too.
		{"an unwritable directory", filepath.Join(locked, "x.svg"), "cannot create a file in", os.Geteuid() == 0},
		{"a read-only file system", "/proc/recoil-x.svg", "cannot create a file in", runtime.GOOS != "linux"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip {
				t.Skip("not testable here")
			}
			o, err := checkOutput("-o", tt.path)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "-o "+tt.path+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("checkOutput(%q) = %v, %v; want a usage error naming -o and the path, saying %q", tt.path, o, err, tt.want)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("checking left files behind: %v", entries)
	}
}

// A write that fails leaves neither a partial file nor an empty one, and
// leaves a file it would have replaced as it was.
func TestOutputWrite(t *testing.T) {
	dir := t.TempDir()
	boom := errors.New("boom")
	tests := []struct {
		name     string
		existing string // "" for none
		write    func(io.Writer) error
		wantErr  error
		want     string // the file's content afterwards; "" for no file
	}{
		{"new file", "", func(w io.Writer) error { _, err := io.WriteString(w, "chart"); return err }, nil, "chart"},
		{"replaced file", "old", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, nil, "new"},
		{"failure, no file", "", func(w io.Writer) error { io.WriteString(w, "half"); return boom }, boom, ""},
		{"failure, old file kept", "old", func(w io.Writer) error { io.WriteString(w, "half"); return boom }, boom, "old"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".svg")
			if tt.existing != "" {
				if err := os.WriteFile(path, []byte(tt.existing), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			o, err := checkOutput("-o", path)
			if err != nil {
				t.Fatal(err)
			}
			if err := o.write(tt.write); !errors.Is(err, tt.wantErr) {
				t.Errorf("write = %v, want %v", err, tt.wantErr)
			}
			got, err := os.ReadFile(path)
			switch {
			case tt.want == "" && !errors.Is(err, os.ErrNotExist):
				t.Errorf("a failed write left %q (%v)", got, err)
			case tt.want != "" && string(got) != tt.want:
				t.Errorf("file holds %q (%v), want %q", got, err, tt.want)
			}
			if fi, err := os.Stat(path); err == nil && tt.existing != "" && fi.Mode().Perm() != 0o600 {
				t.Errorf("replacing changed the file's mode to %v", fi.Mode().Perm())
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("case %d left a temporary file %s", i, e.Name())
				}
			}
		})
	}
}

// An existing file that is not a regular one is written in place, never
// replaced: -csv /dev/stdout must not replace /dev/stdout.
func TestOutputDevice(t *testing.T) {
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Skip(err)
	}
	o, err := checkOutput("-csv", os.DevNull)
	if err != nil || !o.direct {
		t.Fatalf("checkOutput(%s) = %+v, %v; want a direct write", os.DevNull, o, err)
	}
	if err := o.write(func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("%s is now %v (%v)", os.DevNull, fi.Mode(), err)
	}
}
