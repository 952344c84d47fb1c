// Package webutil stands in for a project's own HTTP helper package: a GET
// that hands back the body, the answer's status (0 when none came) and an
// error for anything but a 200.
package webutil

import (
	"fmt"
	"io"
	"net/http"
)

// GetRequest gets url and returns its body, its status and an error for
// any status but 200.
func GetRequest(url string) ([]byte, int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	b, err := io.ReadAll(resp.Body)
	return b, resp.StatusCode, err
}

// GetAny gets url and returns its body and its status, whatever it is;
// its error is only a failure that got no answer.
func GetAny(url string) ([]byte, int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, resp.StatusCode, err
}
