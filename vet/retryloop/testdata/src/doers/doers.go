// Package doers holds, written anew, a retry loop around an HTTP client
// handed in behind an interface of http.Client.Do's shape, with no
// implementation in sight: its error is the transport's, as net/http's is.
package doers

import (
	"fmt"
	"net/http"
	"time"
)

// Doer is the client a caller injects (an *http.Client, or a fake).
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// reachable re-sends until any answer comes: only the transport's errors
// go round, each after the same second.
//
// case: flag nojitter deafwait
func reachable(d Doer, req *http.Request) error {
	for n := 0; n < 30; n++ {
		resp, err := d.Do(req)
		if err == nil {
			return resp.Body.Close()
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop` `deafwait: time.Sleep ignores req.Context\(\)`
	}
	return fmt.Errorf("%s never answered", req.URL)
}
