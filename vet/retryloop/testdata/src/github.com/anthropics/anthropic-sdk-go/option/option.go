// Package option is a stub of anthropic-sdk-go's option package.
package option

import "net/http"

type RequestOption func(*Config)

type Config struct{}

func WithMaxRetries(n int) RequestOption          { return nil }
func WithHTTPClient(c *http.Client) RequestOption { return nil }
