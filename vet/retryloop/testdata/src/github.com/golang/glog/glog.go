// Package glog stands in for github.com/golang/glog: Fatalf logs and ends
// the process, through a hook the analyzer cannot follow.
package glog

import (
	"fmt"
	"os"
)

var exit = func(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(255)
}

// Fatalf logs and exits.
func Fatalf(format string, args ...any) { exit(fmt.Sprintf(format, args...)) }

// Errorf logs.
func Errorf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
