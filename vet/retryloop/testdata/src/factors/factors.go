// Package factors holds waits scaled by a float setting of seconds, and a
// device authorization poll that names its "not yet" by a constant.
package factors

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"
)

// Config is read from the environment by a decoder: nothing in the
// package sets its fields.
type Config struct {
	RetryCount    int
	BackoffFactor float32
}

var config Config

// Options are a model's settings.
type Options struct {
	RetryCount    int
	BackoffFactor float32
}

// Option sets an Option.
type Option func(*Options)

// WithBackoffFactor sets the seconds the backoff doubles from.
func WithBackoffFactor(f float32) Option {
	return func(o *Options) { o.BackoffFactor = f }
}

// Model calls a model API.
type Model struct{ Options Options }

// NewModel makes a model with the configured defaults and opts.
func NewModel(opts ...Option) *Model {
	o := Options{RetryCount: config.RetryCount, BackoffFactor: config.BackoffFactor}
	for _, opt := range opts {
		opt(&o)
	}
	return &Model{Options: o}
}

// A retry that doubles the user's factor of seconds: the same waits for
// every client.
//
// case: flag nojitter
func (m *Model) withRetry(fn func() error) error {
	var err error
	for n := 0; n < m.Options.RetryCount; n++ {
		if err = fn(); err == nil {
			return nil
		}
		time.Sleep(time.Duration(math.Pow(2, float64(n))*float64(m.Options.BackoffFactor)) * time.Second) // want `nojitter: this wait in a retry loop`
	}
	return err
}

// The same retry, each wait drawn at random below the doubled factor.
//
// case: clean
func (m *Model) withJitteredRetry(fn func() error) error {
	var err error
	for n := 0; n < m.Options.RetryCount; n++ {
		if err = fn(); err == nil {
			return nil
		}
		time.Sleep(time.Duration(rand.Float64()*math.Pow(2, float64(n))*float64(m.Options.BackoffFactor)) * time.Second)
	}
	return err
}

const authorizationPending = "authorization_pending"

type tokenError struct {
	Error string `json:"error"`
}

// The device authorization poll, its "not yet" named by a constant: it
// goes round on the server's answer at the server's interval.
//
// case: clean
func pollDeviceToken(hc *http.Client, tokenURL string, form url.Values, interval time.Duration, expiry time.Time) (*http.Response, error) {
	for time.Now().Before(expiry) {
		time.Sleep(interval)
		resp, err := hc.PostForm(tokenURL, form)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusOK {
			return resp, nil
		}
		var te tokenError
		derr := json.NewDecoder(resp.Body).Decode(&te)
		resp.Body.Close()
		if derr != nil || te.Error != authorizationPending {
			return nil, errors.New("device authorization: " + resp.Status)
		}
	}
	return nil, errors.New("device code expired")
}
