// Command recoil runs recoil's demonstrations and tools.
//
// Usage:
//
//	recoil <command> [flags]
//	recoil help <command>
//
// The commands are demo (the main demonstration), blast, sim, gateway, load, audit,
// proxy (which runs the recoil-proxy program, installed beside recoil or on
// PATH) and version ("recoil -version" too). "recoil help <command>", "recoil <command> -h" and
// "recoil <command> --help" print a command's description, flags and
// examples on standard output.
//
// Exit status: 0 on success, 1 on failure, 2 on a usage error (reported
// before any work starts), 130 when interrupted (Ctrl-C) — a long-running
// command then prints what it had done, labelled as interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130 // 128 + SIGINT, as a shell reports a process Ctrl-C ended
)

// errUsage is matched by every usage error: a mistake in the command line,
// reported before any work starts. The command exits with status 2.
var errUsage = errors.New("usage error")

// usageError is a usage error's message; it matches errUsage.
type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == errUsage }

// usagef returns a usage error. The message names the flag and says what
// it accepts: "-callers 0: must be between 1 and 10000".
func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// errInterrupted is matched by the error a long-running command returns
// when its context was cancelled (Ctrl-C) after it printed what it had
// done. The command exits with status 130.
var errInterrupted = errors.New("interrupted")

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands holds the subcommands; each file registers its own in an init
// function, and the usage text lists them in that order (the files' order).
var commands []command

func register(c command) { commands = append(commands, c) }

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	// The first Ctrl-C cancels ctx and the command winds down, printing
	// what it had; a second one ends the process at once.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the process exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		switch len(args) {
		case 1:
			usage(stdout)
			return exitOK
		case 2:
			c, ok := lookup(args[1])
			if !ok {
				fmt.Fprintf(stderr, "recoil help: unknown command %q\n", args[1])
				usage(stderr)
				return exitUsage
			}
			return exit(c.name, c.run(ctx, []string{"-h"}, stdout, stderr), stderr)
		default:
			fmt.Fprintf(stderr, "recoil help: unexpected argument %q; usage: recoil help [command]\n", args[2])
			return exitUsage
		}
	case "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "recoil: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	return exit(c.name, c.run(ctx, args[1:], stdout, stderr), stderr)
}

// exit reports a command's error on stderr and returns the exit status.
func exit(name string, err error, stderr io.Writer) int {
	var code exitCode
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &code):
		return int(code) // a program recoil ran, which printed its own words
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "recoil %s: %v\nRun \"recoil help %s\" for its flags and examples.\n", name, err, name)
		return exitUsage
	case errors.Is(err, errInterrupted):
		fmt.Fprintf(stderr, "recoil %s: %v\n", name, err)
		return exitInterrupted
	default:
		fmt.Fprintf(stderr, "recoil %s: %v\n", name, err)
		return exitFailure
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `recoil calls dependencies that fail — model APIs above all — without letting
the retries become the outage. This command runs its demonstration and tools.

usage: recoil <command> [flags]
       recoil help <command>

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
"recoil help <command>" (or "recoil <command> -h") prints a command's
description, flags and examples.

Exit status: 0 success; 1 failure; 2 usage error (nothing was run);
130 interrupted by Ctrl-C (what was done so far is printed first, labelled
as interrupted).
`)
}

// help is the text of a command's usage, printed around its flags.
type help struct {
	usage    string // the command line, e.g. "recoil sim [flags] scenario.yaml|name"
	about    string // what the command does, a paragraph
	examples string // command lines, one a line, each with a note
	notes    string // more explanation, after the examples; may be empty
	exit     string // what the exit statuses mean for this command
}

// flags is a command's flag set and its help. Errors in the command line
// come back from parse as usage errors, for the caller to report once;
// -h, -help and --help print the help on stdout.
type flags struct {
	*flag.FlagSet
	help   help
	stdout io.Writer
}

func newFlags(name string, stdout io.Writer, h help) *flags {
	fs := flag.NewFlagSet("recoil "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors; help goes to stdout
	fs.Usage = func() {}
	return &flags{FlagSet: fs, help: h, stdout: stdout}
}

// writeHelp writes the command's usage: the command line, what it does,
// its flags, examples, notes and exit statuses.
func (f *flags) writeHelp(w io.Writer) {
	h := f.help
	fmt.Fprintf(w, "usage: %s\n\n%s\n", h.usage, strings.TrimSpace(h.about))
	any := false
	f.VisitAll(func(*flag.Flag) { any = true })
	if any { // a command without flags has no Flags section
		fmt.Fprintf(w, "\nFlags:\n")
		f.SetOutput(w)
		f.PrintDefaults()
		f.SetOutput(io.Discard)
	}
	fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(h.examples, "\n"))
	if h.notes != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(h.notes))
	}
	if h.exit != "" {
		fmt.Fprintf(w, "\nExit status: %s\n", strings.TrimSpace(h.exit))
	}
}

// parse parses args, which must all be flags.
func (f *flags) parse(args []string) error {
	pos, err := f.parseInterspersed(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	return nil
}

// parseInterspersed parses flags that may come before or after other
// arguments, and returns the others. On -h it prints the help on stdout and
// returns flag.ErrHelp.
func (f *flags) parseInterspersed(args []string) ([]string, error) {
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.writeHelp(f.stdout)
				return nil, err
			}
			return nil, &usageError{err.Error()}
		}
		if f.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, f.Arg(0))
		args = f.Args()[1:]
	}
}

// given reports whether the flag was set on the command line, as opposed
// to left at its default.
func (f *flags) given(name string) bool {
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// givenAny returns the first of names set on the command line, or "".
func (f *flags) givenAny(names ...string) string {
	for _, n := range names {
		if f.given(n) {
			return n
		}
	}
	return ""
}

// noZero rejects each named flag that was given as zero: for these flags
// zero would silently mean the default, which is what leaving the flag out
// is for. want says, per flag, what it accepts.
func (f *flags) noZero(want map[string]string) error {
	var err error
	f.Visit(func(fl *flag.Flag) {
		w, ok := want[fl.Name]
		if !ok || err != nil {
			return
		}
		g, ok := fl.Value.(flag.Getter)
		if !ok {
			return
		}
		zero := false
		switch v := g.Get().(type) {
		case int:
			zero = v == 0
		case uint64:
			zero = v == 0
		case float64:
			zero = v == 0
		case time.Duration:
			zero = v == 0
		}
		if zero {
			err = usagef("-%s %s: %s (leave the flag out for its default)", fl.Name, fl.Value, w)
		}
	})
	return err
}

// terminal reports whether w is a terminal, where progress may be shown.
// Tests replace it to see the progress a terminal would.
var terminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
