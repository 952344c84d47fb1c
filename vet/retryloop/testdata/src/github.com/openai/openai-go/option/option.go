// Package option is a stub of openai-go's option package.
package option

import "net/http"

type RequestOption func(*Config)

type Config struct {
	MaxRetries int
	HTTPClient *http.Client
}

func WithMaxRetries(n int) RequestOption          { return func(c *Config) { c.MaxRetries = n } }
func WithHTTPClient(c *http.Client) RequestOption { return func(cf *Config) { cf.HTTPClient = c } }
func WithAPIKey(string) RequestOption             { return func(*Config) {} }
