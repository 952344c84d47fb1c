// Package exithelp is a program's own exit helper: Fatal logs and ends the
// process through a variable tests may swap.
package exithelp

import (
	"log"
	"os"
)

var osExit = os.Exit

// Exit ends the process with code.
func Exit(code int) { // want Exit:"remote=0 waits=false deaf=false jitter=0 durparam=0 retryafter=false bydefault=false exits"
	log.Print("exiting")
	osExit(code)
}

// Fatal logs v and exits with status 1.
func Fatal(v ...any) { // want Fatal:"remote=0 waits=false deaf=false jitter=0 durparam=0 retryafter=false bydefault=false exits"
	log.Print(v...)
	Exit(1)
}

// Warn logs v and returns.
func Warn(v ...any) { log.Print(v...) }
