// Package v2 is a stand-in for cloudevents/sdk-go's top package and the
// aliases it gives its context package's functions.
package v2

import "github.com/cloudevents/sdk-go/v2/context"

// The context package's retry functions, under the names users call.
var (
	ContextWithRetriesConstantBackoff    = context.WithRetriesConstantBackoff
	ContextWithRetriesExponentialBackoff = context.WithRetriesExponentialBackoff
)
