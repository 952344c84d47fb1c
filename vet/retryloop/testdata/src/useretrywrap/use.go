// Package useretrywrap holds, written anew, callers of another package's
// retry wrapper: the wrapper's schedule, read by its fact, is theirs.
package useretrywrap

import (
	"context"
	"net/http"
	"os"
	"time"

	"retrywrap"
)

// A webhook post retried through the wrapper's doubling delay.
//
// case: flag nojitter
func announce(hc *http.Client, url string) error {
	return retrywrap.Do(5, func() error { // want `nojitter: retrywrap.Do waits a constant or purely exponential schedule`
		resp, err := hc.Post(url, "application/json", nil)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
}

// The same post through the jittered wrapper.
//
// case: clean
func announceJittered(hc *http.Client, url string) error {
	return retrywrap.Jittered(5, func() error {
		resp, err := hc.Post(url, "application/json", nil)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
}

// Flush does not retry the function it is handed: no wrapper schedule
// falls on this caller.
//
// case: clean
func flushAll(flush func(int) error) error {
	return retrywrap.Flush(flush)
}

// An RPC retried through a hand-written helper's constant sleep.
//
// case: flag nojitter
func rpcTimes(hc *http.Client, url string) (any, error) {
	return retrywrap.Times(3, time.Second, func() (any, error) { // want `nojitter: retrywrap.Times waits a constant or purely exponential schedule`
		resp, err := hc.Get(url)
		if err != nil {
			return nil, retrywrap.Retryable(err.Error())
		}
		return resp, nil
	})
}

// The same RPC through the helper that spreads its waits.
//
// case: clean
func rpcSpread(hc *http.Client, url string) error {
	return retrywrap.Spread(3, time.Second, func() error {
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
}

// A lock directory taken through the helper: a local operation, nothing
// shared to synchronise on.
//
// case: clean
func takeLock(dir string) error {
	_, err := retrywrap.Times(10, 50*time.Millisecond, func() (any, error) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, retrywrap.Retryable(err.Error())
		}
		return nil, nil
	})
	return err
}

// A readiness poll through the poll helper: not a retry.
//
// case: clean
func awaitReady(hc *http.Client, url string) error {
	return retrywrap.Until(time.Second, func() (bool, error) {
		resp, err := hc.Get(url)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// A sync retried every second through the Poll-family helper.
//
// case: flag nojitter
func syncAll(ctx context.Context, hc *http.Client, url string) error {
	return retrywrap.UntilDone(ctx, time.Second, func() error { // want `nojitter: retrywrap.UntilDone waits a constant or purely exponential schedule`
		resp, err := hc.Post(url, "application/json", nil)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
}

// A deployment watched through the state-poll helper: not a retry.
//
// case: clean
func awaitRollout(ctx context.Context, hc *http.Client, url string) error {
	return retrywrap.AwaitState(ctx, time.Second, func(ctx context.Context) (bool, error) {
		resp, err := hc.Get(url)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}
