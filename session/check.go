package session

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton"
)

// check validates c and derives what follows from it, once: the defaults of
// what was left at zero, the demo's and the plan's own defaults, the models,
// the servers, the parsed ranges, shapes and SLOs. Every error is one line
// that says what was wrong and what to do; they are usage errors. notes
// takes the notes printed for settings accepted without an effect.
func (c *Config) check(notes io.Writer) error {
	if c.prepared {
		return nil
	}
	c.deriveGiven()
	c.fillDefaults()
	if c.Demo != nil {
		c.demoDefaults()
	}
	if c.Plan != nil {
		c.planDefaults()
	}
	for _, step := range []func(*Config) error{
		checkSecrets, checkShapeFlags, takeModels, checkModelGiven, checkProtocol, takeServers,
		checkNumbers, takeComposing,
	} {
		if err := step(c); err != nil {
			return UsageError{Err: err}
		}
	}
	if err := c.PerfAnalyzer.check(c, notes); err != nil {
		return UsageError{Err: err}
	}
	// A tick never spans two measurement windows.
	c.Tick = min(c.Tick, time.Duration(c.MeasurementIntervalMS)*time.Millisecond)
	for _, step := range []func(*Config) error{
		checkPlan, checkCombinations, checkAddresses, checkRanges, checkTLSFlags, checkOutputs,
	} {
		if err := step(c); err != nil {
			return UsageError{Err: err}
		}
	}
	c.prepared = true
	return nil
}

// checkModelGiven refuses a run without a model, and checks the protocol
// and the endpoint.
func checkModelGiven(c *Config) error {
	switch {
	case c.Model != "":
	case c.Plan != nil:
		return errors.New("no model given: use -m MODEL (or --demo to plan against the simulator)")
	default:
		return errors.New("no model given: use -m MODEL (or `tritontop demo` to try the simulator)")
	}
	return nil
}

// checkProtocol checks -i, the endpoint and streaming against each other,
// and the distribution.
func checkProtocol(c *Config) error {
	switch c.Protocol {
	case "grpc", "http":
	default:
		return fmt.Errorf("unknown protocol %s for -i: use grpc or http", textsafe.Quote(c.Protocol))
	}
	if err := c.Endpoint.check(c); err != nil {
		return err
	}
	if c.Streaming && c.Protocol != "grpc" && !c.Endpoint.text() {
		return errors.New("--streaming needs gRPC: drop -i http (or stream an LLM's text with --endpoint generate_stream, chat or completions)")
	}
	switch c.Distribution {
	case "constant", "poisson":
	default:
		return fmt.Errorf("unknown --request-distribution %s: use constant or poisson", textsafe.Quote(c.Distribution))
	}
	return nil
}

// deriveGiven fills Given for a Config a program made: a setting counts as
// given when it is not zero (or, for URL, not empty; for a setting whose
// default is not zero — the connections, the measurement window, the
// trials and the tick, which a plan has defaults of its own for — when it
// is not Defaults()'s either).
func (c *Config) deriveGiven() {
	if c.Given != nil {
		return
	}
	c.Given = map[string]bool{}
	d := Defaults()
	for name, set := range map[string]bool{
		"measurement-interval":          c.MeasurementIntervalMS != 0 && c.MeasurementIntervalMS != d.MeasurementIntervalMS,
		"max-trials":                    c.MaxTrials != 0 && c.MaxTrials != d.MaxTrials,
		"tick":                          c.Tick != 0 && c.Tick != d.Tick,
		"concurrency":                   c.Concurrency != 0,
		"request-rate":                  c.RequestRate != 0,
		"streams":                       c.Streams != 0,
		"step-duration":                 c.StepDuration != 0,
		"workers":                       c.Workers.Count != 0,
		"worker-index":                  c.Workers.Index != 0,
		"u":                             c.URL != "" || len(c.URLs) > 0,
		"balance":                       len(c.URLs) > 1 && c.Balance != "",
		"max-threads":                   c.PerfAnalyzer.MaxThreads != 0,
		"sync":                          c.PerfAnalyzer.Sync,
		"prompt-tokens":                 c.LLM.PromptTokens != 0,
		"synthetic-input-tokens-mean":   c.Endpoint.InputTokensMean != 0,
		"synthetic-input-tokens-stddev": c.Endpoint.InputTokensStdDev != 0,
		"output-tokens-mean":            c.Endpoint.OutputTokensMean != 0,
		"output-tokens-stddev":          c.Endpoint.OutputTokensStdDev != 0,
		"num-prompts":                   c.Endpoint.NumPrompts != 0,
		"sequence-id-range":             c.Sequences.IDRange != "",
		"serial-sequences":              c.Sequences.Serial,
		"trace-speed":                   c.Shape.TraceSpeed != 0 && c.Shape.TraceSpeed != 1,
		"connections":                   c.Connections != 0 && c.Connections != Defaults().Connections,
		"isl-block-size":                c.Mooncake.BlockTokens != 0 && c.Mooncake.BlockTokens != triton.DefaultBlockTokens,
	} {
		if set {
			c.Given[name] = true
		}
	}
}

// Validate checks c as New would, without changing it or connecting to
// anything: nil, or a usage error of one line saying what is wrong.
func (c Config) Validate() error {
	if c.Given != nil {
		c.Given = maps.Clone(c.Given)
	}
	return c.check(io.Discard)
}

// takeComposing parses --bls-composing-models, which names the composing
// models of the one model under load.
func takeComposing(c *Config) error {
	if len(c.BLSComposingModels) == 0 {
		c.bls = nil
		return nil
	}
	if c.several() {
		return fmt.Errorf("--bls-composing-models names the composing models of one BLS model, and this run has %d models (%s): run the BLS model alone", len(c.models), c.Model)
	}
	bls, err := stats.ParseComposing(strings.Join(c.BLSComposingModels, ","))
	if err != nil {
		return fmt.Errorf("--bls-composing-models: %w", err)
	}
	c.bls = bls
	return nil
}
