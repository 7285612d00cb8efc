package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// demoFlags are the flags of tritontop demo and plan --demo that size the
// simulated GPU.
type DemoConfig struct {
	// gpuRate is --demo-gpu-rate: the requests/s the demo GPU serves the
	// model at full batches; 0 sizes it to the host (from the cached
	// calibration, or a new one), "full" (-1) keeps the simulator's own
	// profile.
	GPURate float64
	// recalibrate is --demo-gpu-rate auto: calibrate even with a cached
	// calibration.
	Recalibrate bool
	// CacheDir is the directory the calibration is cached in; empty:
	// tritontop's directory in the user's cache directory.
	CacheDir string
}

// Sizing of the demo GPU to the host. The simulator runs in tritontop's own
// process, so every request costs the host the client's work and the
// server's (decoding and encoding the tensors, twice through loopback): a
// demo GPU faster than that would show the client's limit, not the
// server's. The calibration drives the model on an instant GPU (no compute
// time) from as many requests in flight as a demo run has, and the demo GPU
// is sized to demoHostShare of the rate it reached, rounded down to a step
// of demoRateSteps so that the next calibration on the same host, a little
// faster or slower, usually picks the same GPU.
const (
	demoHostShare   = 0.25
	demoCalibWarm   = 200 * time.Millisecond
	demoCalibTime   = 800 * time.Millisecond
	demoCalibFloor  = 20.0 // req/s: the slowest demo GPU
	demoCalibFlight = 16
)

// demoRateSteps are the demo GPU's speeds per decade: 1, 1.5, 2, 3, 5 and 7 times a
// power of ten, requests per second.
var demoRateSteps = []float64{1, 1.5, 2, 3, 5, 7}

// demoSizing says how the demo GPU was sized, for the run's header and the
// line printed at the start.
type demoSizing struct {
	// Rate is the demo GPU's full-batch rate for the model; HostRate what
	// the calibration reached (0 when the rate was given); Factor how
	// much slower than the simulator's own profile the GPU runs.
	Rate, HostRate, Factor float64
	Model                  string
	// Cached is when the calibration used was made, when it came from the
	// cache; zero when it was made at this start.
	Cached time.Time
}

// String is the line the demo prints at its start and the header carries.
func (d demoSizing) String() string {
	if d.HostRate > 0 {
		when := "at this start"
		if !d.Cached.IsZero() {
			when = "on " + d.Cached.UTC().Format("2006-01-02 15:04 UTC") + ", cached; --demo-gpu-rate auto calibrates again"
		}
		return fmt.Sprintf("demo GPU sized to this host: %s req/s of %s at full batches, %s× slower than the simulator's H100-like profile (%s of the %s req/s this host's client drove in calibration %s)",
			rateText(d.Rate), d.Model, strconv.FormatFloat(d.Factor, 'f', 1, 64), pctText(demoHostShare), rateText(d.HostRate), when)
	}
	return fmt.Sprintf("demo GPU set by --demo-gpu-rate: %s req/s of %s at full batches (%s× slower than the simulator's H100-like profile)",
		rateText(d.Rate), d.Model, strconv.FormatFloat(d.Factor, 'f', 1, 64))
}

// demoRateStep rounds rate down to a step of demoRateSteps.
func demoRateStep(rate float64) float64 {
	if !(rate > 0) {
		return 0
	}
	decade := math.Pow(10, math.Floor(math.Log10(rate)))
	out := decade / 10 * demoRateSteps[len(demoRateSteps)-1]
	for _, s := range demoRateSteps {
		if s*decade <= rate*(1+1e-9) {
			out = s * decade
		}
	}
	return out
}

// sizeDemoRepository sizes repo's GPUs for the demo of f's model: to
// --demo-gpu-rate, or to the host by a calibration. ok is false when the
// model is not one the sizing applies to (no GPU, decoupled, or full).
func sizeDemoRepository(ctx context.Context, f *Config, d DemoConfig, repo sim.Repository) (sim.Repository, demoSizing, bool, error) {
	i := -1
	for j, m := range repo.Models {
		if m.Name == f.Model {
			i = j
		}
	}
	if d.GPURate < 0 || i < 0 || sim.FullBatchRate(repo.Models[i]) == 0 || f.Streaming {
		return repo, demoSizing{}, false, nil
	}
	sz := demoSizing{Model: f.Model, Rate: d.GPURate}
	if sz.Rate == 0 {
		key := demoCacheKey(f)
		c, ok := loadDemoCalibration(d.CacheDir, key)
		if !ok || d.Recalibrate {
			host, err := calibrateDemo(ctx, f, repo, i)
			if err != nil {
				return repo, demoSizing{}, false, fmt.Errorf("size the demo GPU to this host: %w (give --demo-gpu-rate N to size it yourself)", err)
			}
			c = demoCalibration{HostRate: host, When: time.Now()}
			saveDemoCalibration(d.CacheDir, key, c)
		} else {
			sz.Cached = c.When
		}
		host := c.HostRate
		sz.HostRate = host
		sz.Rate = max(demoRateStep(demoHostShare*host), demoCalibFloor)
	}
	out, factor, err := sim.SizeDemoGPU(repo, f.Model, sz.Rate)
	if err != nil {
		return repo, demoSizing{}, false, err
	}
	sz.Factor = factor
	sz.Rate = min(sz.Rate, sim.FullBatchRate(out.Models[i]))
	// The dashboard's GPU pane shows the name: it says what was sized.
	for j := range out.GPUs {
		out.GPUs[j].Name = fmt.Sprintf("%s: %s req/s of %s", sim.DemoGPUName, rateText(sz.Rate), f.Model)
	}
	return out, sz, true, nil
}

// calibrateDemo is the requests/s this host drives of f's requests for
// model i against the simulator in this process with no compute time: a
// closed loop of demoCalibFlight requests in flight (at least two per
// core), counted over demoCalibTime after a warm-up.
func calibrateDemo(ctx context.Context, f *Config, repo sim.Repository, i int) (float64, error) {
	instant := sim.Repository{GPUs: repo.GPUs, Models: []sim.ModelSpec{repo.Models[i]}}
	instant.Models[0].Latency = sim.LatencySpec{}
	srv, err := sim.Start(ctx, sim.Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0", Repository: instant})
	if err != nil {
		return 0, fmt.Errorf("start the calibration simulator: %w", err)
	}
	defer srv.Close()
	cf := *f
	cf.URL = srv.GRPCAddr()
	if f.Protocol == "http" {
		cf.URL = srv.HTTPAddr()
	}
	cf.URLs, cf.models = nil, nil
	t, err := connect(ctx, &cf)
	if err != nil {
		return 0, err
	}
	defer t.close()
	prepared, err := prepareAll(t)
	if err != nil {
		return 0, err
	}
	cctx, cancel := context.WithTimeout(ctx, demoCalibWarm+demoCalibTime+5*time.Second)
	defer cancel()
	var (
		counting atomic.Bool
		done     atomic.Int64
		failed   atomic.Value
		wg       sync.WaitGroup
	)
	stop := make(chan struct{})
	for w := range max(demoCalibFlight, 2*runtime.NumCPU()) {
		wg.Go(func() {
			for k := w; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := t.client.Send(cctx, prepared[k%len(prepared)]); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				if counting.Load() {
					done.Add(1)
				}
			}
		})
	}
	timer := time.NewTimer(demoCalibWarm)
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	counting.Store(true)
	began := time.Now()
	timer.Reset(demoCalibTime)
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	n, took := done.Load(), time.Since(began)
	close(stop)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return 0, fmt.Errorf("a calibration request failed: %w", err)
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if n == 0 {
		return 0, errors.New("no calibration request finished")
	}
	return float64(n) / took.Seconds(), nil
}

// prepareAll prepares the target's requests for its client.
func prepareAll(t *target) ([]triton.Prepared, error) {
	prepared := make([]triton.Prepared, 0, len(t.requests))
	for _, r := range t.requests {
		p, err := t.client.Prepare(r)
		if err != nil {
			return nil, fmt.Errorf("prepare a request: %w", err)
		}
		prepared = append(prepared, p)
	}
	if len(prepared) == 0 {
		return nil, errors.New("no request to send")
	}
	return prepared, nil
}

// pctText is a share as a whole percentage.
func pctText(f float64) string { return strconv.FormatFloat(100*f, 'f', 0, 64) + "%" }

// rateText is a rate in requests per second, whole numbers.
func rateText(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) }
