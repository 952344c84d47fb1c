// Package apicheck stands in for an API client's shared package: the
// test of an answer's status kept in a function of its own.
package apicheck

import (
	"fmt"
	"net/http"
)

// CheckResponse returns nil for a 2xx answer and an error carrying the
// status for any other.
func CheckResponse(r *http.Response) error {
	switch r.StatusCode {
	case 200, 201, 202, 204:
		return nil
	}
	return fmt.Errorf("%s %s: status %d", r.Request.Method, r.Request.URL, r.StatusCode)
}
