// Package mirror is a stand-in for another module's copy helper whose
// HTTP call turns every non-2xx answer into its error.
package mirror

import (
	"fmt"
	"net/http"
)

// Copy fetches src for copying.
func Copy(src string) error {
	resp, err := http.Get(src)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("mirror: status %d", resp.StatusCode)
	}
	return nil
}
