package main

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
)

// ownTool copies the vettool to a file of its own under work, with random
// bytes after its end, and returns the copy's path.
//
// go vet keys its cache on the tool's hash (what `recoil-vet -V=full`
// prints, a hash of the executable's bytes). A package it vetted only as
// another's dependency, for the facts, is cached under the same key as a
// vet of that package itself but with none of its diagnostics, so a later
// run that names it replays an empty result: a score that silently loses
// findings after anyone vets the module copy by hand with the same binary.
// The copy's hash is this run's alone, so every package is vetted afresh;
// an executable runs the same with bytes after its end.
func ownTool(vettool, work string) (string, error) {
	src, err := os.Open(vettool)
	if err != nil {
		return "", fmt.Errorf("-vettool: %v", err)
	}
	defer src.Close()
	dst, err := os.CreateTemp(work, "recoil-vet-run-*")
	if err != nil {
		return "", err
	}
	tail := make([]byte, 32)
	rand.Read(tail)
	_, err = io.Copy(dst, src)
	if err == nil {
		_, err = dst.Write(tail)
	}
	if err == nil {
		err = dst.Chmod(0o755)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst.Name())
		return "", fmt.Errorf("copying %s: %v", vettool, err)
	}
	return dst.Name(), nil
}
