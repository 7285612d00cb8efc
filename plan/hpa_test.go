package plan

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// parseHPA parses YAML strictly (an unknown or repeated field is an error)
// into Kubernetes' own autoscaling/v2 type.
func parseHPA(t *testing.T, b []byte) autoscalingv2.HorizontalPodAutoscaler {
	t.Helper()
	var h autoscalingv2.HorizontalPodAutoscaler
	if err := yaml.UnmarshalStrict(b, &h); err != nil {
		t.Fatalf("not a valid autoscaling/v2 HorizontalPodAutoscaler: %v\n%s", err, b)
	}
	return h
}

// rulesFromComments returns the Prometheus adapter rule printed in the
// YAML's header comments, parsed.
func rulesFromComments(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var block []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.Contains(l, "rules list:"):
			in = true
		case in && strings.HasPrefix(l, "#     "):
			block = append(block, strings.TrimPrefix(l, "#     "))
		case in && len(block) > 0:
			in = false
		}
	}
	if len(block) == 0 {
		t.Fatalf("no adapter rule in the comments:\n%s", b)
	}
	var rules []map[string]any
	if err := yaml.UnmarshalStrict([]byte(strings.Join(block, "\n")), &rules); err != nil {
		t.Fatalf("the adapter rule is not YAML: %v\n%s", err, strings.Join(block, "\n"))
	}
	return rules
}

func TestHPAYAML(t *testing.T) {
	for _, c := range []struct {
		name       string
		opts       HPAOptions
		metricName string
		target     string // the quantity the HPA must hold
		inRule     []string
	}{
		{
			name:       "GPU utilization",
			opts:       HPAOptions{Deployment: "triton", MinReplicas: 2, MaxReplicas: 6, Metric: ScaleOnGPUUtilization, Target: 0.85},
			metricName: DefaultGPUUtilizationMetric, target: "850m",
			inRule: []string{"nv_gpu_utilization", "avg by (<<.GroupBy>>)"},
		},
		{
			name: "queue time",
			opts: HPAOptions{Deployment: "triton-resnet", Namespace: "inference", Model: "resnet50",
				MinReplicas: 1, MaxReplicas: 10, Metric: ScaleOnQueueTime, Target: 5000, RateWindow: 2 * time.Minute},
			metricName: DefaultQueueTimeMetric, target: "5000",
			inRule: []string{"nv_inference_queue_duration_us", "nv_inference_request_success", `model="resnet50"`, "[2m]"},
		},
		{
			name: "pending requests",
			opts: HPAOptions{Deployment: "triton", Name: "triton-pending", Model: `odd"name`,
				MinReplicas: 3, MaxReplicas: 3, Metric: ScaleOnPendingRequests, Target: 2.5, MetricName: "my_pending"},
			metricName: "my_pending", target: "2500m",
			inRule: []string{"nv_inference_pending_request_count", `model="odd\"name"`},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := HPAYAML(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			h := parseHPA(t, b)
			if h.APIVersion != "autoscaling/v2" || h.Kind != "HorizontalPodAutoscaler" {
				t.Errorf("apiVersion/kind = %s/%s", h.APIVersion, h.Kind)
			}
			name := c.opts.Name
			if name == "" {
				name = c.opts.Deployment
			}
			ns := c.opts.Namespace
			if ns == "" {
				ns = "default"
			}
			if h.Name != name || h.Namespace != ns {
				t.Errorf("metadata = %s/%s, want %s/%s", h.Namespace, h.Name, ns, name)
			}
			ref := h.Spec.ScaleTargetRef
			if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != c.opts.Deployment {
				t.Errorf("scaleTargetRef = %+v", ref)
			}
			if h.Spec.MinReplicas == nil || int(*h.Spec.MinReplicas) != c.opts.MinReplicas || int(h.Spec.MaxReplicas) != c.opts.MaxReplicas {
				t.Fatalf("replicas = %v..%d, want %d..%d", h.Spec.MinReplicas, h.Spec.MaxReplicas, c.opts.MinReplicas, c.opts.MaxReplicas)
			}
			if *h.Spec.MinReplicas > h.Spec.MaxReplicas {
				t.Errorf("minReplicas %d > maxReplicas %d", *h.Spec.MinReplicas, h.Spec.MaxReplicas)
			}
			if len(h.Spec.Metrics) != 1 {
				t.Fatalf("%d metrics, want 1", len(h.Spec.Metrics))
			}
			m := h.Spec.Metrics[0]
			if m.Type != autoscalingv2.PodsMetricSourceType || m.Pods == nil {
				t.Fatalf("metric = %+v, want a Pods metric", m)
			}
			if m.Pods.Metric.Name != c.metricName {
				t.Errorf("metric name = %q, want %q", m.Pods.Metric.Name, c.metricName)
			}
			tg := m.Pods.Target
			if tg.Type != autoscalingv2.AverageValueMetricType || tg.AverageValue == nil {
				t.Fatalf("target = %+v, want an AverageValue", tg)
			}
			if want := resource.MustParse(c.target); tg.AverageValue.Cmp(want) != 0 {
				t.Errorf("target = %s, want %s", tg.AverageValue, c.target)
			}
			if got := tg.AverageValue.AsApproximateFloat64(); math.Abs(got-c.opts.Target) > 1e-9 {
				t.Errorf("target = %v, asked for %v", got, c.opts.Target)
			}

			rules := rulesFromComments(t, b)
			if len(rules) != 1 {
				t.Fatalf("%d adapter rules, want 1", len(rules))
			}
			r := rules[0]
			if as := r["name"].(map[string]any)["as"]; as != c.metricName {
				t.Errorf("adapter rule exposes %v, want %s", as, c.metricName)
			}
			query := r["seriesQuery"].(string) + " " + r["metricsQuery"].(string)
			for _, s := range c.inRule {
				if !strings.Contains(query, s) {
					t.Errorf("adapter rule lacks %s: %s", s, query)
				}
			}
			over := r["resources"].(map[string]any)["overrides"].(map[string]any)
			if over["pod"] == nil || over["namespace"] == nil {
				t.Errorf("adapter rule does not map pod and namespace: %v", over)
			}
		})
	}
}

// TestHPAYAMLGolden is the plan's HPA for one example, as a reader sees it.
func TestHPAYAMLGolden(t *testing.T) {
	b, err := HPAYAML(HPAOptions{
		Deployment: "triton", Namespace: "inference", MinReplicas: 2, MaxReplicas: 6,
		Metric: ScaleOnGPUUtilization, Target: 0.85,
		Notes: []string{"Capacity per replica: 1,180 req/s at p99 <= 100 ms with every GPU <= 85%."},
	})
	if err != nil {
		t.Fatal(err)
	}
	golden.RequireEqual(t, b)
}

func TestHPAYAMLRejects(t *testing.T) {
	ok := HPAOptions{Deployment: "triton", Model: "m", MinReplicas: 1, MaxReplicas: 2, Metric: ScaleOnQueueTime, Target: 1000}
	for _, c := range []struct {
		name   string
		change func(*HPAOptions)
		want   string
	}{
		{"no deployment", func(o *HPAOptions) { o.Deployment = "" }, "no Deployment"},
		{"bad deployment", func(o *HPAOptions) { o.Deployment = "Triton_Server" }, "not a Kubernetes name"},
		{"bad namespace", func(o *HPAOptions) { o.Namespace = "a.b" }, "namespace"},
		{"zero min", func(o *HPAOptions) { o.MinReplicas = 0 }, "at least 1"},
		{"max below min", func(o *HPAOptions) { o.MinReplicas, o.MaxReplicas = 4, 3 }, "below minReplicas"},
		{"GPU above 1", func(o *HPAOptions) { o.Metric, o.Target = ScaleOnGPUUtilization, 85 }, "fraction"},
		{"negative target", func(o *HPAOptions) { o.Target = -1 }, "positive"},
		{"NaN target", func(o *HPAOptions) { o.Target = math.NaN() }, "positive"},
		{"tiny target", func(o *HPAOptions) { o.Target = 0.0001 }, "below 0.001"},
		{"no model", func(o *HPAOptions) { o.Model = "" }, "model"},
		{"unknown metric", func(o *HPAOptions) { o.Metric = 7 }, "unknown metric"},
		{"bad metric name", func(o *HPAOptions) { o.MetricName = "queue-time" }, "Prometheus metric name"},
		{"fractional window", func(o *HPAOptions) { o.RateWindow = 1500 * time.Millisecond }, "whole seconds"},
		{"multi-line note", func(o *HPAOptions) { o.Notes = []string{"a\nkind: Pod"} }, "one line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := ok
			c.change(&o)
			_, err := HPAYAML(o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("HPAYAML = %v, want an error about %q", err, c.want)
			}
		})
	}
	if _, err := HPAYAML(ok); err != nil {
		t.Errorf("the valid options fail: %v", err)
	}
}

func TestQuantity(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0.85, "850m"},
		{0.001, "1m"},
		{1, "1"},
		{5000, "5000"},
		{2.5, "2500m"},
		{0.8555, "856m"}, // thousandths
		{1.9999, "2"},
	} {
		got := quantity(c.v)
		if got != c.want {
			t.Errorf("quantity(%v) = %q, want %q", c.v, got, c.want)
		}
		if _, err := resource.ParseQuantity(got); err != nil {
			t.Errorf("quantity(%v) = %q does not parse: %v", c.v, got, err)
		}
	}
}
