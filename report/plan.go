package report

import (
	"fmt"
	"io"
	"math"
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
	if p.Simulated {
		server := "tritontop's simulator"
		if p.DemoGPU != "" {
			server += "; " + p.DemoGPU
		}
		fmt.Fprintf(&b, "  SIMULATED server: %s.\n", server)
	}
	if p.Refused != "" && !(p.Capacity > 0) {
		fmt.Fprintf(&b, "  NO REPLICAS PLANNED: %s.\n", p.Refused)
		return writeOut(w, &b)
	}
	fmt.Fprintf(&b, "  One replica holds %s req/s (%s) under the SLO.\n", fixed(p.Capacity, 1), p.CapacityLevel.String())
	if p.CapacityTokensPerS > 0 {
		fmt.Fprintf(&b, "  That is %s output tokens/s.\n", fixed(p.CapacityTokensPerS, 1))
	}
	if p.CapacityBasis != "" {
		fmt.Fprintf(&b, "  Capacity: %s.\n", p.CapacityBasis)
	}
	fmt.Fprintf(&b, "  What limits it: %s\n", p.Limit)
	if p.Refused != "" {
		fmt.Fprintf(&b, "  NO REPLICAS PLANNED: %s.\n", p.Refused)
		return writeOut(w, &b)
	}
	if p.ClientBound {
		b.WriteString("  CLIENT-BOUND: the capacity is a lower bound; planned anyway because of --allow-client-bound.\n")
	}
	spare := ""
	if n := p.Replicas - int(math.Ceil(p.TargetRate/p.Capacity-1e-9)); p.Spare && n == 1 {
		spare = ", one of them spare"
	} else if p.Spare && n > 1 {
		spare = fmt.Sprintf(", %d of them spare", n)
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
	fmt.Fprintf(&b, "  Autoscaling: %d to %d replicas on %s", p.MinReplicas, p.MaxReplicas, target)
	if p.MinRate > 0 && p.MaxRate > 0 {
		fmt.Fprintf(&b, " (%s req/s trough to %s req/s burst)", fixed(p.MinRate, 0), fixed(p.MaxRate, 0))
	}
	b.WriteString(".\n")
	if c := p.Cost; c != nil {
		fmt.Fprintf(&b, "  Cost: %s per hour at the target; %s per million %s at capacity.\n", usd(c.PerHour), usd(c.PerMillion), c.Unit)
	}
	b.WriteString("  Assumptions:\n")
	for _, a := range p.Assumptions {
		b.WriteString("    - " + a + "\n")
	}
	yaml, title := p.HPA, "HorizontalPodAutoscaler (autoscaling/v2):\n"
	if p.KEDA != "" {
		yaml, title = p.KEDA, "KEDA ScaledObject (keda.sh/v1alpha1):\n"
	}
	if yaml != "" {
		b.WriteString(title)
		b.WriteString(yaml)
		if !strings.HasSuffix(yaml, "\n") {
			b.WriteByte('\n')
		}
	}
	return writeOut(w, &b)
}

func writeOut(w io.Writer, b *strings.Builder) error {
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write plan: %w", err)
	}
	return nil
}

// usd is a price in dollars: cents, or four significant figures under a
// dollar.
func usd(v float64) string {
	if v != 0 && v < 1 && v > -1 && v*100 != math.Round(v*100) {
		return "$" + strconv.FormatFloat(v, 'g', 4, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 2, 64)
}
