// Package ownproc holds, written anew, a command-line client that dials
// its own daemon and forks the daemon when the first dial times out,
// beside one that waits for a daemon somebody else runs.
package ownproc

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"time"
)

// startDaemon forks this program as the daemon and leaves it running.
func startDaemon() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return exec.Command(self, "daemon", "run").Start()
}

// connect dials the daemon, forking it on the first failure and dialling
// again every tenth of a second, ten times at most: a wait for a server
// this process started, not a retry storm.
//
// case: clean
func connect(addr string) (net.Conn, error) {
	started := false
	for try := 0; try < 10; try++ {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return conn, nil
		}
		if !started {
			if err := startDaemon(); err != nil {
				return nil, err
			}
			started = true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, errors.New("daemon did not start")
}

// connectShared dials a daemon it did not start, every tenth of a
// second, in step with every other client.
//
// case: flag nojitter
func connectShared(addr string) (net.Conn, error) {
	for try := 0; try < 10; try++ {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return conn, nil
		}
		time.Sleep(100 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
	return nil, errors.New("daemon not reachable")
}

// openTunnel starts ssh to the host's agent and speaks over its output:
// a transport to another machine, not a daemon of this one.
func openTunnel(host string) (io.ReadCloser, error) {
	cmd := exec.Command("ssh", host, "agent")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return out, nil
}

// connectTunnel opens the tunnel again every second while it fails, in
// step with every other client of that host.
//
// case: flag nojitter
func connectTunnel(host string) (io.ReadCloser, error) {
	for try := 0; try < 10; try++ {
		r, err := openTunnel(host)
		if err == nil {
			return r, nil
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
	}
	return nil, errors.New("no tunnel")
}
