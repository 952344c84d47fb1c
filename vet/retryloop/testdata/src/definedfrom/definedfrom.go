// want package:"offline"

// Package definedfrom holds, written anew, a struct type defined from
// another package's (helm's chartutil does this): its fields are the
// other package's, and this package gives them defaults. The analyzer
// must not describe another package's fields; before it learnt that, the
// analysis of such a package panicked.
package definedfrom

import (
	"errors"
	"time"

	"example.com/basecfg"
)

// Options are basecfg's, under this package's name.
type Options basecfg.Options

// Defaults gives the options this package uses.
func Defaults() *Options {
	return &Options{Timeout: 30 * time.Second, Backoff: time.Second}
}

var errBusy = errors.New("busy")

// settle tries the caller's step (a call elsewhere, for all it knows)
// until it stops being busy, waiting the configured backoff: a second by
// this package's defaults, the same for every caller.
//
// case: flag nojitter
func settle(o *Options, step func() error) error {
	for i := 0; i < 5; i++ {
		if err := step(); !errors.Is(err, errBusy) {
			return err
		}
		time.Sleep(o.Backoff) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
	}
	return errBusy
}
