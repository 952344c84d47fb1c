package fleet

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/recoil-go/recoil/internal/testsvc"
)

// The multi-process test's allowance: N per window, shared by procs OS
// processes for windows windows.
const (
	procs        = 4
	procWindows  = 6
	procWindow   = 500 * time.Millisecond
	procN        = 250
	procBurst    = procN / 10
	procLease    = procN / 50
	procSlack    = procBurst + procs*procLease // the documented bound: Burst + replicas × Lease
	helperEnv    = "RECOIL_FLEET_HELPER"
	helperPrefix = "RECOIL_FLEET_PREFIX"
	helperOut    = "RECOIL_FLEET_OUT"
)

// Four OS processes — this test binary re-run as helpers — share one
// allowance of N per window and ask for far more: in every window the fleet
// admits at most N plus the documented slack, and over the run at least
// 90 % of N per window.
func TestProcessesShareOneAllowance(t *testing.T) {
	// A server of its own: the shared one serves other tests, whose pauses
	// and sweeps would stall these processes.
	addr := startRedis(t, 0).addr()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prefix := testPrefix(t)
	dir := t.TempDir()
	cmds := make([]*exec.Cmd, procs)
	stderr := make([]bytes.Buffer, procs)
	stdin := make([]io.WriteCloser, procs)
	ready := make(chan error, procs)
	for i := range cmds {
		cmd := exec.Command(exe, "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"=1", "RECOIL_REDIS_ADDR="+addr, helperPrefix+"="+prefix,
			helperOut+"="+filepath.Join(dir, strconv.Itoa(i)))
		cmd.Stderr = &stderr[i]
		if stdin[i], err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
		go func() { // each helper says "ready" once it has its allowance
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err == nil && line != "ready\n" {
				err = fmt.Errorf("helper said %q", line)
			}
			ready <- err
			io.Copy(io.Discard, stdout)
		}()
	}
	timeout := time.After(30 * time.Second)
	for range procs {
		select {
		case err := <-ready:
			if err != nil {
				t.Fatalf("a helper did not start: %v", err)
			}
		case <-timeout:
			t.Fatal("the helpers did not start within 30 s")
		}
	}
	// All four are ready: agree on a start instant just ahead.
	start := time.Now().Add(100 * time.Millisecond)
	for _, w := range stdin {
		fmt.Fprintln(w, start.UnixNano())
		w.Close()
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, stderr[i].String())
		}
	}
	perWindow, stalled := readAdmissions(t, dir)
	total, steady := 0, 0
	for w, n := range perWindow {
		if n > procN+procSlack {
			t.Errorf("window %d: %d processes admitted %d, want ≤ %d (N + Burst + replicas × Lease)", w, procs, n, procN+procSlack)
		}
		if !stalled[w] {
			total += n
			steady++
		}
	}
	// The floor is checked over the windows in which no process stalled
	// (went procStall without asking): on a loaded two-core machine a
	// process can be descheduled for a good part of a window, which no
	// limiter can use. Every window stalled leaves nothing to judge it on.
	if want := steady * procN * 9 / 10; total < want {
		t.Errorf("%d processes admitted %d in %d steady windows, want ≥ %d (90 %% of N per window)", procs, total, steady, want)
	}
	t.Logf("admitted per %v window by %d processes, N = %d, slack %d: %v (stalled: %v)", procWindow, procs, procN, procSlack, perWindow, stalled)
}

// procStall is how long a helper may go without asking before its window
// counts as stalled.
const procStall = procWindow / 10

// readAdmissions reads the helpers' files: how many were admitted in each
// window, and which windows some helper stalled in.
func readAdmissions(t *testing.T, dir string) (perWindow [procWindows]int, stalled [procWindows]bool) {
	t.Helper()
	for i := range procs {
		f, err := os.Open(filepath.Join(dir, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var w int
			var gap int64
			if _, err := fmt.Sscanf(sc.Text(), "gap %d %d", &w, &gap); err == nil {
				if w >= 0 && w < procWindows && time.Duration(gap) > procStall {
					stalled[w] = true
				}
				continue
			}
			ns, err := strconv.ParseInt(sc.Text(), 10, 64)
			if err != nil {
				t.Fatalf("helper %d wrote %q", i, sc.Text())
			}
			if w := time.Duration(ns) / procWindow; w >= 0 && w < procWindows {
				perWindow[w]++
			}
		}
		f.Close()
	}
	return perWindow, stalled
}

// TestHelperProcess is one of the processes of
// TestProcessesShareOneAllowance; run alone, it does nothing.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	r := redis.NewClient(&redis.Options{Addr: testsvc.Redis(t), ContextTimeoutEnabled: true})
	defer r.Close()
	c, err := New(Config{Redis: r, Prefix: os.Getenv(helperPrefix), Replicas: procs, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a := mustAllowance(t, c, AllowanceConfig{Name: "org", Limit: procN, Window: procWindow, Burst: procBurst, Lease: procLease})
	out, err := os.Create(os.Getenv(helperOut))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(out)
	fmt.Println("ready")
	var startNs int64
	if _, err := fmt.Scanln(&startNs); err != nil {
		t.Fatalf("reading the start instant: %v", err)
	}
	start := time.Unix(0, startNs)
	end := start.Add(procWindows * procWindow)
	time.Sleep(time.Until(start)) // the agreed start instant, not a condition
	// Each admission as its offset from start; then, per window, the
	// longest the process went without asking ("gap <window> <ns>"): a
	// process the machine stalled could not use the window.
	var gaps [procWindows]time.Duration
	last := start
	for now := time.Now(); now.Before(end); now = time.Now() {
		if wi := now.Sub(start) / procWindow; wi >= 0 && wi < procWindows {
			gaps[wi] = max(gaps[wi], now.Sub(last))
		}
		last = now
		if a.AllowAt(now, Interactive) {
			fmt.Fprintln(w, now.Sub(start).Nanoseconds())
		}
	}
	for wi, g := range gaps {
		fmt.Fprintf(w, "gap %d %d\n", wi, g.Nanoseconds())
	}
	if !c.Shared() {
		t.Errorf("helper fell back to its local share: Redis was too slow")
	}
	c.Close()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
