// Package uncounted holds, written anew, counted retry loops that count
// only some of their ways round.
package uncounted

import (
	"math/rand/v2"
	"net/http"
	"time"
)

// A refused connection counts a try; a 503 goes round without counting,
// for as long as the server answers it.
//
// case: flag unbounded retryafter
func send(hc *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	var resp *http.Response
	try := 0
	for try < 3 { // want `unbounded: retry loop counts its attempts on some ways round only`
		resp, err = hc.Do(req)
		if err != nil {
			try++
			time.Sleep(rand.N(100 * time.Millisecond)) // want `retryafter: retry loop retries 503 without reading Retry-After`
			continue
		}
		if resp.StatusCode == http.StatusServiceUnavailable {
			resp.Body.Close()
			time.Sleep(rand.N(100 * time.Millisecond))
			continue
		}
		break
	}
	return resp, err
}

// Every try counted before its outcome is looked at.
//
// case: flag retryafter
func sendCounted(hc *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	var resp *http.Response
	try := 0
	for try < 3 {
		resp, err = hc.Do(req)
		try++
		if err != nil {
			time.Sleep(rand.N(100 * time.Millisecond)) // want `retryafter: retry loop retries 503 without reading Retry-After`
			continue
		}
		if resp.StatusCode == http.StatusServiceUnavailable {
			resp.Body.Close()
			time.Sleep(rand.N(100 * time.Millisecond))
			continue
		}
		break
	}
	return resp, err
}

// Each way round counts in its own branch.
//
// case: flag retryafter
func sendCountedEach(hc *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	var resp *http.Response
	try := 0
	for try < 3 {
		resp, err = hc.Do(req)
		if err != nil {
			try++
			time.Sleep(rand.N(100 * time.Millisecond)) // want `retryafter: retry loop retries 503 without reading Retry-After`
			continue
		}
		if resp.StatusCode == http.StatusServiceUnavailable {
			try++
			resp.Body.Close()
			time.Sleep(rand.N(100 * time.Millisecond))
			continue
		}
		break
	}
	return resp, err
}
