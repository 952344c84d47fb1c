package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func init() {
	register(command{"proxy", "run recoil-proxy: the engine in front of any language's model SDK", runProxy})
}

// proxyBinary is the program "recoil proxy" runs. The proxy is a module of
// its own, so that neither this command's users nor the proxy's carry the
// other's dependencies; "recoil proxy" finds its binary as git finds
// git-<command>.
const proxyBinary = "recoil-proxy"

// proxyInstall says how to get the binary from a clone of the repository.
const proxyInstall = `recoil-proxy is a program of its own (the proxy module). From a clone of the
repository, either of:
  go install ./proxy/cmd/recoil-proxy      # then "recoil proxy" finds it on PATH
  go run ./proxy/cmd/recoil-proxy [flags]  # without installing
docs/proxy.md tells the rest.`

var proxyHelp = help{
	usage: "recoil proxy [flags]",
	about: `
Runs recoil-proxy with the flags given: recoil's retry engine as the one retry
layer in front of any language's model SDK. Point an SDK's base URL at it
(OPENAI_BASE_URL=http://127.0.0.1:8787/v1, ANTHROPIC_BASE_URL=http://127.0.0.1:8787);
with no configuration it forwards to the providers the same variables name in
its own environment, under recoil's default policy. recoil looks for the
program beside its own executable, then on PATH. SIGINT and SIGTERM drain the
proxy's calls and stop it; SIGHUP reloads its configuration.`,
	examples: `  recoil proxy                              # 127.0.0.1:8787, to the SDKs' providers
  recoil proxy -config proxy.yaml -check    # check a configuration, print its routes
  recoil proxy -config proxy.yaml           # routes, policies, clients, the fleet`,
	notes: proxyInstall,
	exit:  "recoil-proxy's own: 0 stopped after draining; 1 failure; 2 usage error. 1 too when recoil-proxy is not installed.",
}

// findProxy returns the path of the recoil-proxy binary: the one beside
// this executable (the two installed together), else the first on PATH.
func findProxy() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), proxyBinary)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(proxyBinary)
}

// exitCode is a child program's exit status, which recoil passes on
// without a message of its own (the child printed its own).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// runProxy runs recoil-proxy with the arguments, on this process's
// standard input and the command's outputs, and passes its exit status on.
// recoil waits for the proxy to drain and stop; it does not cut a drain
// short.
func runProxy(_ context.Context, args []string, stdout, stderr io.Writer) error {
	path, err := findProxy()
	if len(args) == 1 && isHelp(args[0]) {
		return proxyHelpText(path, stdout)
	}
	if err != nil {
		return fmt.Errorf("%s is not installed beside recoil or on PATH.\n%s", proxyBinary, proxyInstall)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	// What is sent to recoil goes to the proxy: SIGINT and SIGTERM drain
	// it, SIGHUP reloads its configuration. (A Ctrl-C reaches both; the
	// proxy takes a second one as it takes the first.)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	signal.Stop(sigs)
	close(done)
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return exitCode(code)
		}
		return exitCode(exitFailure) // ended by a signal
	}
	return err
}

// proxyHelpText writes the command's help and, when the program at path
// (empty: not installed) answers -h, the flags it lists.
func proxyHelpText(path string, stdout io.Writer) error {
	newFlags("proxy", stdout, proxyHelp).writeHelp(stdout)
	if path == "" {
		return flag.ErrHelp
	}
	var b strings.Builder
	cmd := exec.Command(path, "-h")
	cmd.Stdout = &b
	if cmd.Run() != nil {
		return flag.ErrHelp
	}
	_, usage, _ := strings.Cut(b.String(), "\n") // its own usage line repeats ours
	_, err := fmt.Fprintf(stdout, "\nFlags of %s (%s):\n%s", proxyBinary, path, usage)
	if err != nil {
		return err
	}
	return flag.ErrHelp
}

// isHelp reports whether a is one of the ways to ask for help.
func isHelp(a string) bool {
	return a == "-h" || a == "-help" || a == "--help"
}
