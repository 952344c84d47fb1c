package fixes

import (
	"net/http"
	"time"
)

// norandRetry retries 502 on a fixed second; the file imports no rand, so
// the fix brings math/rand/v2.
func norandRetry(c *http.Client, url string) (*http.Response, error) {
	for i := 0; i < 3; i++ {
		resp, err := c.Get(url)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusBadGateway {
			return resp, nil
		}
		resp.Body.Close()
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
	}
	return nil, http.ErrHandlerTimeout
}
