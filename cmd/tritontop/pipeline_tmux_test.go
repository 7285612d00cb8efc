package main

import (
	"fmt"
	"regexp"
	"testing"
	"time"
)

// stepRowRe matches a composing model's row of the server pane, with its
// queue, compute and batch measured: "├ preprocess  q 3.61ms  c 20.5ms
// b 2.3" (queue, compute and batch spelled out on a wide pane).
func stepRowRe(glyph, model string) *regexp.Regexp {
	return regexp.MustCompile(glyph + ` ` + model + `\s+(q|queue) [\d.]+(µs|ms|s)\s+(c|compute) [\d.]+(µs|ms|s)\s+(b|batch) [\d.]+`)
}

// TestPipelineInTmux runs the demo's pipeline, resnet50_pipeline, in a
// real terminal at 80x24 and at 120x40: the server pane shows the
// pipeline's time and under it a row per step, preprocess then resnet50,
// with their own queue, compute and batch; q exits with status 0.
func TestPipelineInTmux(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, sz := range []struct{ w, h int }{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			t.Parallel()
			tm := newTerminal(t, sz.w, sz.h, bin+" demo -m resnet50_pipeline --demo-gpu-rate full")
			pre, net := stepRowRe("├", "preprocess"), stepRowRe("└", "resnet50")
			screen, ok := tm.waitFor(40*time.Second, func() {}, func(s string) bool {
				return pre.MatchString(s) && net.MatchString(s)
			})
			if !ok {
				t.Fatalf("the server pane never showed a row per step with its numbers:\n%s", screen)
			}
			if !regexp.MustCompile(`pipeline: its steps' queue`).MatchString(screen) || !regexp.MustCompile(`request [\d.]+ ?(µs|ms|s)`).MatchString(screen) {
				t.Errorf("the server pane does not show the pipeline's time over its steps:\n%s", screen)
			}
			tm.quitOK()
		})
	}
}
