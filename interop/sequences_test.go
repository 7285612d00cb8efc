package interop_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/interop"
)

// TestSequences runs tritontop against a real Triton's stateful models,
// simple_sequence (the direct strategy, 8 sequence slots) and
// simple_dyna_sequence (oldest first, CORRID control), at concurrency 4:
// four sequences at a time, each of 10 requests (no variation), the ones
// still running when the load stops ended at once.
//
// Triton keeps no count of sequences in its statistics; its verbose log
// (--log-verbose=1) has a line for every request it enqueues ("Enqueuing
// CORRID n into batcher ...") and for every sequence end it takes ("end
// sequence CORRID n"). So, over the run:
//
//   - every request is counted: tritontop's counts and server times are
//     Triton's (checkExact), and none failed;
//   - tritontop's sequence count is the number of sequences Triton saw
//     (distinct correlation ids enqueued), and Triton ended each of them;
//   - no sequence error: Triton logged no conflict (a START on a live id)
//     and no request without its sequence;
//   - the requests are 10 a sequence but for the sequences the stop cut
//     short: at most 4 of them, each with 1 to 10 requests.
func TestSequences(t *testing.T) {
	t.Parallel()
	for _, model := range []string{"simple_sequence", "simple_dyna_sequence"} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			wallTime(t)
			srv := interop.Start(t, interop.Options{Models: []string{model}, Args: []string{"--log-verbose=1"}})
			const length, concurrency = 10, 4
			c := configFor(srv, "grpc", model)
			c.Concurrency, c.Sequences.Length, c.Sequences.Variation = concurrency, length, 0
			c.InputData = "zero"
			run, d, _ := measure(t, srv, model, c)
			sum := run.Summary
			checkExact(t, "the run", sum.Client, sum.Server, d)
			seen, ended, problems := serverSequences(srv.Log())
			sq := sum.Client.Sequences
			if sq == nil {
				t.Fatal("tritontop counted no sequence")
			}
			t.Logf("tritontop: %d sequences ended, %d requests; Triton: %d sequences, %d ended", sq.Ended, sum.Client.Requests, seen, ended)
			if sq.Ended != int64(seen) || ended != seen {
				t.Errorf("tritontop counted %d sequences; Triton saw %d and ended %d", sq.Ended, seen, ended)
			}
			if len(problems) > 0 {
				t.Errorf("Triton's log has sequence errors:\n%s", strings.Join(problems, "\n"))
			}
			n := sum.Client.Requests
			if full := (sq.Ended - concurrency) * length; n < full+concurrency || n > sq.Ended*length {
				t.Errorf("%d requests in %d sequences of %d (at most %d of them cut short)", n, sq.Ended, length, concurrency)
			}
		})
	}
}

var (
	enqueued     = regexp.MustCompile(`Enqueuing CORRID (\d+) into`)
	endSequence  = regexp.MustCompile(`(?i)end sequence CORRID (\d+) in batcher`)
	seqProblemRe = regexp.MustCompile(`has a conflict|must specify the START flag|force-end|force-ending`)
)

// serverSequences reads a Triton verbose log: the sequences it enqueued
// requests of (distinct correlation ids), how many of them it ended, and
// the lines that say something went wrong with a sequence.
func serverSequences(log string) (seen, ended int, problems []string) {
	ids := map[string]bool{}
	for _, m := range enqueued.FindAllStringSubmatch(log, -1) {
		ids[m[1]] = true
	}
	ends := map[string]bool{}
	for _, m := range endSequence.FindAllStringSubmatch(log, -1) {
		if ids[m[1]] {
			ends[m[1]] = true
		}
	}
	for line := range strings.Lines(log) {
		if seqProblemRe.MatchString(line) {
			problems = append(problems, strings.TrimSpace(line))
		}
	}
	return len(ids), len(ends), problems
}
