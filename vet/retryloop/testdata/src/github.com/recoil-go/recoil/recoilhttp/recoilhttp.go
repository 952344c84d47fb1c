// Package recoilhttp is a stub of recoil's HTTP transport.
package recoilhttp

import (
	"net/http"
	"time"
)

type Transport struct{ Base http.RoundTripper }

func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) { return nil, nil }

func ModelAPI(base http.RoundTripper) *Transport { return &Transport{Base: base} }

func ServerWait(h http.Header, now time.Time) (time.Duration, bool) { return 0, false }
