// Package wraperr holds, written anew, retry-go operations that hand the
// library a download helper's error wrapped with fmt.Errorf: words added
// to the same error, which tests nothing; and the same operation that
// marks all but a busy gateway's errors unrecoverable.
package wraperr

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/avast/retry-go/v4"
)

var errBusy = errors.New("gateway busy")

func fetch(url string) (int64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, fmt.Errorf("fetch %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusGatewayTimeout {
		return 0, errBusy
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("fetch %s: status %s", url, resp.Status)
	}
	return resp.ContentLength, nil
}

// download retries every error of fetch, a 404 as much as a 503, each
// only wrapped, a constant second apart.
//
// case: flag unclassified nojitter retryafter
func download(url string) (int64, error) {
	var size int64
	err := retry.Do(func() error { // want `unclassified: retry.Do retries every error of fetch` `nojitter: retry.Do waits a constant` `retryafter: retry.Do retries 429 and 503`
		var err error
		if size, err = fetch(url); err != nil {
			return fmt.Errorf("download: %w", err)
		}
		return nil
	}, retry.Attempts(5), retry.Delay(time.Second), retry.DelayType(retry.FixedDelay))
	return size, err
}

// downloadKnown is download's twin that goes round only on a busy
// gateway, wrapped the same way, on retry-go's default jittered backoff.
//
// case: clean
func downloadKnown(url string) (int64, error) {
	var size int64
	err := retry.Do(func() error {
		var err error
		if size, err = fetch(url); err != nil && !errors.Is(err, errBusy) {
			return retry.Unrecoverable(fmt.Errorf("download: %w", err))
		} else if err != nil {
			return fmt.Errorf("download: %w", err)
		}
		return nil
	}, retry.Attempts(5))
	return size, err
}
