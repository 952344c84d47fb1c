// Package netonly holds, written anew, start-up logins retried only when
// the error is the network's (errors.As onto a net.Error or a url.Error),
// any other — a refused login, a 401 folded into the error — fatal.
package netonly

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/golang/glog"
)

type api struct {
	hc   *http.Client
	base string
}

// login asks the server for a session; any answer but 200 is an error.
func (a *api) login() error {
	resp, err := a.hc.Get(a.base + "/login")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("login: %s", resp.Status)
	}
	return nil
}

// A network failure waits a constant second until the deadline; any
// other failure ends the process.
//
// case: flag nojitter
func ensureLoggedIn(a *api, timeout time.Duration) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		err := a.login()
		if err == nil {
			return
		}
		var netErr net.Error
		if !errors.As(err, &netErr) {
			glog.Fatalf("fatal login error: %v", err)
		}
		select {
		case <-deadline.C:
			glog.Fatalf("no login after %s: %v", timeout, err)
		case <-time.After(time.Second): // want `nojitter: this wait in a retry loop`
			glog.Errorf("retrying: %v", err)
		}
	}
}

// The same, told by url.Error, a random pause, counted.
//
// case: clean
func loginRetrying(a *api) error {
	var err error
	for tries := 0; tries < 5; tries++ {
		if err = a.login(); err == nil {
			return nil
		}
		var uerr *url.Error
		if !errors.As(err, &uerr) {
			return err
		}
		time.Sleep(rand.N(time.Second))
	}
	return err
}
