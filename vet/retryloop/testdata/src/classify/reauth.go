package classify

import (
	"math/rand"
	"net/http"
	"time"
)

// session holds a bearer token, fetched again once reset.
type session struct {
	rt    http.RoundTripper
	token string
}

// ResetToken forgets the token: the next request logs in again.
func (s *session) ResetToken() { s.token = "" }

func (s *session) send(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+s.token)
	return s.rt.RoundTrip(r)
}

// sendReauth re-sends a 401 or a 403 after dropping the token: the
// request goes again with new credentials, a re-authentication.
//
// case: clean
func (s *session) sendReauth(req *http.Request) (*http.Response, error) {
	for try := 0; ; try++ {
		resp, err := s.send(req)
		if err != nil {
			return nil, err
		}
		if try == 2 || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
			return resp, nil
		}
		resp.Body.Close()
		s.ResetToken()
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(time.Duration(rand.Int63n(int64(time.Second)))):
		}
	}
}

// sendAgain re-sends the same 401 or 403 with the same token: the answer
// will not change.
//
// case: flag unclassified
func (s *session) sendAgain(req *http.Request) (*http.Response, error) {
	for try := 0; ; try++ { // want `unclassified: retry loop around session.send retries on 401, 403, which will not change`
		resp, err := s.send(req)
		if err != nil {
			return nil, err
		}
		if try == 2 || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
			return resp, nil
		}
		resp.Body.Close()
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(time.Duration(rand.Int63n(int64(time.Second)))):
		}
	}
}
