// want package:"offline"

// Package drivercodes holds, written anew, retries of a message bus's
// object store that read the server's code out of the driver's own error
// type: no HTTP response in sight, but a 503 all the same.
package drivercodes

import (
	"errors"
	"math/rand"
	"time"

	"example.com/bus"
)

// download goes round on the store's 503 every second, forever.
//
// case: flag nojitter unbounded
func download(c *bus.Conn, name, path string) error {
	for { // want `unbounded: retry loop has no bound`
		err := c.GetFile(name, path)
		if err == nil {
			return nil
		}
		if serr, ok := err.(bus.StreamError); ok && serr.APIError().Code == 503 {
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			continue
		}
		return err
	}
}

// downloadSpread retries the same 503 a few times, at a random moment.
//
// case: clean
func downloadSpread(c *bus.Conn, name, path string) error {
	var err error
	for try := 0; try < 5; try++ {
		if err = c.GetFile(name, path); err == nil {
			return nil
		}
		var apiErr *bus.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != 503 {
			return err
		}
		time.Sleep(time.Duration(rand.Int63n(int64(time.Second << try))))
	}
	return err
}
