package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/record"
)

// WritePlan writes a capacity plan: one replica's capacity and what limits
// it, the replicas and GPUs the target needs, the autoscaling settings with
// every assumption, and the HorizontalPodAutoscaler YAML.
func WritePlan(w io.Writer, p *record.Plan) error {
	var b strings.Builder
	b.WriteString("Capacity plan\n")
	fmt.Fprintf(&b, "  One replica holds %s req/s (%s) under the SLO.\n", fixed(p.Capacity, 1), p.CapacityLevel.String())
	if p.CapacityTokensPerS > 0 {
		fmt.Fprintf(&b, "  That is %s output tokens/s.\n", fixed(p.CapacityTokensPerS, 1))
	}
	fmt.Fprintf(&b, "  What limits it: %s\n", p.Limit)
	spare := ""
	if p.Spare {
		spare = ", one of them spare"
	}
	fmt.Fprintf(&b, "  For %s req/s: %d replicas%s (headroom %s), %d GPUs in all (%d per replica).\n",
		fixed(p.TargetRate, 0), p.Replicas, spare, strconv.FormatFloat(100*p.Headroom, 'f', 0, 64)+"%", p.GPUs, p.GPUsPerReplica)
	target := strconv.FormatFloat(p.AutoscalingTarget, 'f', -1, 64)
	switch p.Autoscaling {
	case "gpu-utilization":
		target = strconv.FormatFloat(100*p.AutoscalingTarget, 'f', 0, 64) + "% average GPU utilization"
	case "queue-time":
		target += " µs of queue time per request"
	case "pending-requests":
		target += " pending requests per pod"
	}
	fmt.Fprintf(&b, "  Autoscaling: %d to %d replicas on %s.\n", p.MinReplicas, p.MaxReplicas, target)
	b.WriteString("  Assumptions:\n")
	for _, a := range p.Assumptions {
		b.WriteString("    - " + a + "\n")
	}
	if p.HPA != "" {
		b.WriteString("HorizontalPodAutoscaler (autoscaling/v2):\n")
		b.WriteString(p.HPA)
		if !strings.HasSuffix(p.HPA, "\n") {
			b.WriteByte('\n')
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write plan: %w", err)
	}
	return nil
}
