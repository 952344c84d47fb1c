package main

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestGatewayCommandSerial: -serial serialises the attempts (four sent
// at once arrive one at a time, so no 200 ms window holds more than one
// of them at 300 ms each), the startup lines say so, and the flag and the
// timeline field are checked like the others.
func TestGatewayCommandSerial(t *testing.T) {
	gwNoLeaks(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "t.yaml")
	if err := os.WriteFile(file, []byte("serial: 2m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-serial", "-12ms"}, "-serial -12ms: gateway: serial: -12ms is not between 0 (off) and 10s"},
		{[]string{"-serial", "11s"}, "-serial 11s: gateway: serial: 11s is not between 0 (off) and 10s"},
		{[]string{"-bare", "-serial", "12ms"}, "-bare serves a handler without faults or counting; it takes no -serial"},
		{[]string{"-timeline", file}, "t.yaml:1: serial: 2m0s is not between 0 (off) and 10s"},
	} {
		args := append([]string{"gateway"}, tt.args...)
		runCLI(t.Context(), args...).usageErr(t, args, tt.want)
	}

	url, out, stop := startGateway(t, "-serial", "300ms", "-outage", "0s+1h")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			resp, err := tr.RoundTrip(mustRequest(t, http.MethodGet, url+"/v1/messages"))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	if err := stop(); !errors.Is(err, errInterrupted) {
		t.Fatalf("runGateway = %v, want it interrupted after cancel", err)
	}
	for _, want := range []string{
		"serialised: one attempt at a time, each holding the lane 300ms",
		"counted: 4 attempts, 0 answered with a success, peak 1 in one 200ms (sliding)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
