package eofpolls

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

type settings struct{ Region string }

type agent struct {
	hc       *http.Client
	url      string
	settings *settings
}

// loadSettings folds every failure into nil: the transport's, any status
// but 200 (decoded as JSON anyway, failing), a body that does not parse.
func (a *agent) loadSettings() *settings {
	req, err := http.NewRequest(http.MethodGet, a.url, nil)
	if err != nil {
		return nil
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	s := &settings{}
	if err := json.NewDecoder(resp.Body).Decode(s); err != nil {
		return nil
	}
	return s
}

// waitSettings asks until it gets settings, every failure alike, the
// wait doubling from a second to ten minutes and never randomised.
//
// case: flag unclassified nojitter retryafter
func (a *agent) waitSettings(ctx context.Context) error {
	for i := 1; ; { // want `unclassified: retry loop around agent.loadSettings retries on every error`
		a.settings = a.loadSettings()
		if a.settings != nil {
			return nil
		}
		d := time.Duration(i) * time.Second
		if i < 600 {
			i *= 2
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
		}
	}
}

// published returns nil while the settings are not published yet (a
// 404), as well as on a failure.
func (a *agent) published() *settings {
	resp, err := a.hc.Get(a.url)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	s := &settings{}
	if json.NewDecoder(resp.Body).Decode(s) != nil {
		return nil
	}
	return s
}

// waitPublished waits for the settings to be published: nil is "not
// yet" as often as a failure, a poll for a state, at a jittered pace.
//
// case: clean
func (a *agent) waitPublished(ctx context.Context, jitter func(time.Duration) time.Duration) error {
	for {
		if a.settings = a.published(); a.settings != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(jitter(5 * time.Second)):
		}
	}
}
