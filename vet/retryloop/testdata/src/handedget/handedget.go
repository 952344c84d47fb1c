// Package handedget holds, written anew, a reader that takes its fetch
// as a parameter — every caller in the package hands it the same named
// function — and one that calls a fetch helper returning the status as a
// value beside a nil error.
package handedget

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// fetcher fetches a URL: the status, its text, the body, or an error when
// nothing came back.
type fetcher func(url string) (int, string, io.ReadCloser, error)

// httpFetch fetches over HTTP; a status comes with a nil error.
func httpFetch(url string) (int, string, io.ReadCloser, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", nil, err
	}
	return resp.StatusCode, resp.Status, resp.Body, nil
}

// fileFetch reads a file of this machine, as a fetch would answer.
func fileFetch(path string) (int, string, io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", nil, err
	}
	return http.StatusOK, "200 OK", f, nil
}

// The fetch is a parameter, but the package's only caller hands it
// httpFetch: a 5xx (a 503 among them) goes round after a constant pause,
// Retry-After unread; a 4xx returns.
//
// case: flag nojitter retryafter
func readWithRetries(get fetcher, pause time.Duration, url string, attempts int) (io.ReadCloser, error) {
	var err error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			time.Sleep(pause) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 503 without reading Retry-After`
		}
		code, status, body, gerr := get(url)
		if gerr != nil {
			err = gerr
			continue
		}
		if code == http.StatusOK {
			return body, nil
		}
		body.Close()
		err = fmt.Errorf("reading %s: %s", url, status)
		if code < 500 {
			break
		}
	}
	return nil, err
}

// The same loop calling httpFetch by name: its status is a value beside a
// nil error, so only a failed connection and a 5xx go round — no 400.
//
// case: flag nojitter retryafter
func readDirect(pause time.Duration, url string, attempts int) (io.ReadCloser, error) {
	var err error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			time.Sleep(pause) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 503 without reading Retry-After`
		}
		code, status, body, gerr := httpFetch(url)
		if gerr != nil {
			err = gerr
			continue
		}
		if code == http.StatusOK {
			return body, nil
		}
		body.Close()
		err = fmt.Errorf("reading %s: %s", url, status)
		if code < 500 {
			break
		}
	}
	return nil, err
}

// The same loop handed fileFetch by its only caller: a file of this
// machine read again, with nothing shared to spread out.
//
// case: clean
func readLocalWithRetries(get fetcher, pause time.Duration, path string, attempts int) (io.ReadCloser, error) {
	var err error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			time.Sleep(pause)
		}
		code, status, body, gerr := get(path)
		if gerr != nil {
			err = gerr
			continue
		}
		if code == http.StatusOK {
			return body, nil
		}
		body.Close()
		err = fmt.Errorf("reading %s: %s", path, status)
		if code < 500 {
			break
		}
	}
	return nil, err
}

// Source reads a resource by URL and its fallback from disk.
type Source struct {
	URL, Path string
	Attempts  int
}

// Open reads the resource: from the URL, else from the file.
func (s *Source) Open() (io.ReadCloser, error) { // want Open:`remote=2 waits=true deaf=true jitter=1 durparam=0 retryafter=false bydefault=false`
	if body, err := readWithRetries(httpFetch, time.Second, s.URL, s.Attempts); err == nil {
		return body, nil
	}
	if body, err := readDirect(time.Second, s.URL, s.Attempts); err == nil {
		return body, nil
	}
	return readLocalWithRetries(fileFetch, 10*time.Millisecond, s.Path, s.Attempts)
}
