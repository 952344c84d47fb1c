package idempotency_test

import (
	"testing"

	"github.com/recoil-go/recoil/idempotency"
	"github.com/recoil-go/recoil/idempotency/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempotency.Store {
		s, err := idempotency.NewMemory(idempotency.MemoryConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
