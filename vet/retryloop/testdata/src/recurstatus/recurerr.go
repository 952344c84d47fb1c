package recurstatus

import (
	"errors"
	"fmt"
	"net/http"
)

// statusError carries a failed answer's status.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("status %d", e.code) }

// getDeployment reads a deployment: any failed status is its error.
func (a *API) getDeployment(id string) (*http.Response, error) {
	resp, err := a.client.Get(a.base + "/deployments/" + id)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, &statusError{resp.StatusCode}
	}
	return resp, nil
}

// Tracker follows a plan's progress.
type Tracker struct {
	api        *API
	maxRetries int
	token      string
}

// The deployment read again, by recursion and at once, on every error
// the read returns: a 401 or 404 as much as a 503, a 429 without its
// Retry-After.
//
// case: flag unclassified retryafter
func (t *Tracker) checkStatus(id string, out chan<- int, retries int) {
	resp, err := t.api.getDeployment(id)
	if err != nil {
		if retries < t.maxRetries {
			retries++
			t.checkStatus(id, out, retries) // want `unclassified: retry by recursion re-sends on every error of API.getDeployment` `retryafter: retry by recursion re-sends 429 and 503`
		}
		return
	}
	resp.Body.Close()
	out <- resp.StatusCode
}

// The same read again only on a 502 or 503 the error carries.
//
// case: clean
func (t *Tracker) checkStatusClassified(id string, out chan<- int, retries int) {
	resp, err := t.api.getDeployment(id)
	if err != nil {
		var se *statusError
		if errors.As(err, &se) && (se.code == 502 || se.code == 503) && retries < t.maxRetries {
			t.checkStatusClassified(id, out, retries+1)
		}
		return
	}
	resp.Body.Close()
	out <- resp.StatusCode
}

// refreshToken fetches a new token.
func (t *Tracker) refreshToken() error {
	t.token = "fresh"
	return nil
}

// A failed read refreshes the token and tries once more: a re-authentication.
//
// case: clean
func (t *Tracker) readAfterLogin(id string, again bool) (*http.Response, error) {
	resp, err := t.api.getDeployment(id)
	if err != nil {
		if !again {
			return nil, err
		}
		if lerr := t.refreshToken(); lerr != nil {
			return nil, lerr
		}
		return t.readAfterLogin(id, false)
	}
	return resp, err
}

// A read through net/http itself: its error is the transport's alone,
// no status comes with it.
//
// case: clean
func (t *Tracker) pingAgain(id string, retries int) error {
	resp, err := t.api.client.Get(t.api.base + "/ping/" + id)
	if err != nil {
		if retries > 0 {
			return t.pingAgain(id, retries-1)
		}
		return err
	}
	return resp.Body.Close()
}
