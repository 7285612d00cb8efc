package session

import (
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/triton"
)

// Defaults is a load run's settings before any is given: the command line's
// defaults, which a program starts from too.
func Defaults() Config {
	return Config{
		Protocol:              "grpc",
		Balance:               "least",
		BatchSize:             1,
		InputData:             "random",
		Distribution:          "constant",
		MaxInflight:           defaultMaxInflight,
		Tick:                  time.Second,
		Window:                10 * time.Second,
		MeasurementIntervalMS: 5000,
		StabilityPercent:      10,
		MaxTrials:             10,
		Connections:           1,
		ConnectTimeout:        5 * time.Second,
		Drain:                 5 * time.Second,
		FPS:                   10,
		Endpoint:              EndpointConfig{Name: string(triton.EndpointInfer)},
		Mooncake:              MooncakeConfig{BlockTokens: triton.DefaultBlockTokens},
		Retry:                 RetryConfig{Backoff: driver.DefaultRetryBackoff, MaxBackoff: driver.DefaultRetryMaxBackoff},
		Shape:                 ShapeConfig{TraceSpeed: 1},
		Sequences: SequenceConfig{Length: driver.DefaultSequenceLength, Variation: 20,
			Count: driver.DefaultSequences},
		Gates:   GatesConfig{Repeat: 1, RepeatPause: 2 * time.Second},
		Workers: WorkersConfig{ScrapeInterval: defaultScrapeInterval},
		PerfAnalyzer: PerfAnalyzerConfig{ServiceKind: "triton", MeasurementMode: TimeWindows,
			MeasurementRequestCount: defaultMeasurementRequestCount, SharedMemory: "none",
			OutputSharedMemorySize: defaultOutputShmSize},
	}
}

// DefaultPlan is a capacity plan's settings before any is given
// (tritontop plan's defaults).
func DefaultPlan() PlanConfig {
	return PlanConfig{
		Deployment: "triton", Namespace: "default",
		Budget: PlanBudget{Repeat: plan.DefaultRepeat, Burst: plan.DefaultBurst, Autoscaler: "hpa",
			PrometheusURL: plan.DefaultPrometheusURL},
	}
}

// fillDefaults gives each setting left at zero, where zero is not allowed
// and the command line did not give it, its default: so a program's Config
// needs only what it sets.
func (c *Config) fillDefaults() {
	d := Defaults()
	str := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	num := func(v *int, def int, flag string) {
		if *v == 0 && !c.Given[flag] {
			*v = def
		}
	}
	dur := func(v *time.Duration, def time.Duration, flag string) {
		if *v == 0 && !c.Given[flag] {
			*v = def
		}
	}
	str(&c.Protocol, d.Protocol)
	str(&c.Balance, d.Balance)
	str(&c.InputData, d.InputData)
	str(&c.Distribution, d.Distribution)
	str(&c.Endpoint.Name, d.Endpoint.Name)
	str(&c.PerfAnalyzer.ServiceKind, d.PerfAnalyzer.ServiceKind)
	str(&c.PerfAnalyzer.MeasurementMode, d.PerfAnalyzer.MeasurementMode)
	str(&c.PerfAnalyzer.SharedMemory, d.PerfAnalyzer.SharedMemory)
	num(&c.BatchSize, d.BatchSize, "b")
	num(&c.MeasurementIntervalMS, d.MeasurementIntervalMS, "measurement-interval")
	num(&c.MaxTrials, d.MaxTrials, "max-trials")
	num(&c.Connections, d.Connections, "connections")
	num(&c.FPS, d.FPS, "fps")
	num(&c.Gates.Repeat, d.Gates.Repeat, "repeat")
	num(&c.Sequences.Length, d.Sequences.Length, "sequence-length")
	num(&c.Sequences.Count, d.Sequences.Count, "num-of-sequences")
	num(&c.Mooncake.BlockTokens, d.Mooncake.BlockTokens, "isl-block-size")
	num(&c.PerfAnalyzer.MeasurementRequestCount, d.PerfAnalyzer.MeasurementRequestCount, "measurement-request-count")
	dur(&c.Tick, d.Tick, "tick")
	dur(&c.Window, d.Window, "window")
	dur(&c.ConnectTimeout, d.ConnectTimeout, "connect-timeout")
	if c.StabilityPercent == 0 && !c.Given["stability-percentage"] {
		c.StabilityPercent = d.StabilityPercent
	}
	if c.Shape.TraceSpeed == 0 && !c.Given["trace-speed"] {
		c.Shape.TraceSpeed = d.Shape.TraceSpeed
	}
}
