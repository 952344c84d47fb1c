// Package status is a stub of grpc-go's status.
package status

import "google.golang.org/grpc/codes"

func Code(err error) codes.Code { return codes.OK }
