package platform

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register adds c to reg and returns it; when an identical collector is already registered
// (a second router or worker built in the same process, as tests do) it returns that one, so
// both share the same series instead of panicking.
func Register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(T); ok {
			return existing
		}
	}
	if err != nil {
		panic(err)
	}
	return c
}
