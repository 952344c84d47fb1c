// Package doerfolds holds, written anew, the twin of package doers: the
// same loop through a Doer whose implementation in sight turns every
// non-2xx answer into its error.
package doerfolds

import (
	"fmt"
	"net/http"
	"time"
)

// Doer is the client a caller injects.
type Doer interface {
	Do(req *http.Request) (*http.Response, error) // want Do:"remote=1 waits=false deaf=false jitter=0 durparam=0 retryafter=false bydefault=false"
}

// strictClient is a Doer of this package that turns every non-2xx
// answer into its error.
type strictClient struct{ hc *http.Client }

func (s *strictClient) Do(req *http.Request) (*http.Response, error) { // want Do:"remote=1 waits=false deaf=false jitter=0 durparam=0 retryafter=false bydefault=false folds"
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		resp.Body.Close()
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp, nil
}

type api struct {
	client Doer
}

func newAPI(hc *http.Client) *api { return &api{client: &strictClient{hc: hc}} }

// push is doers.reachable's twin through a Doer whose every implementation
// in sight folds the status into its error: a 400 goes round with a reset.
//
// case: flag unclassified nojitter deafwait
func (a *api) push(req *http.Request) error {
	for n := 0; n < 30; n++ { // want `unclassified: retry loop around Doer.Do retries on every error`
		resp, err := a.client.Do(req)
		if err == nil {
			return resp.Body.Close()
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop` `deafwait: time.Sleep ignores req.Context\(\)`
	}
	return fmt.Errorf("%s never took it", req.URL)
}
