package driver

import (
	"time"

	"github.com/tritontop/tritontop/load"
)

// Step is one stage of a stepped schedule.
type Step struct {
	Load     load.Target
	Duration time.Duration
}
