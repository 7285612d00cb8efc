package plan

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// HPAMetric is the signal a HorizontalPodAutoscaler scales Triton replicas
// on. Each reaches the HPA as a Pods metric through the Prometheus adapter.
type HPAMetric int

const (
	// ScaleOnGPUUtilization keeps the pods' average GPU utilization (Triton's
	// nv_gpu_utilization, 0..1) at the target.
	ScaleOnGPUUtilization HPAMetric = iota
	// ScaleOnQueueTime keeps the pods' average server queue time per request
	// (µs) at the target. It still rises when GPU utilization has saturated,
	// as it often does early with dynamic batching.
	ScaleOnQueueTime
	// ScaleOnPendingRequests keeps the average number of requests waiting
	// in each pod's queue at the target.
	ScaleOnPendingRequests
)

// String names the metric as the plan prints it.
func (m HPAMetric) String() string {
	switch m {
	case ScaleOnGPUUtilization:
		return "GPU utilization"
	case ScaleOnQueueTime:
		return "queue time per request"
	case ScaleOnPendingRequests:
		return "pending requests per pod"
	}
	return fmt.Sprintf("HPAMetric(%d)", int(m))
}

// Defaults of HPAOptions: the metric names the adapter rules in the YAML's
// comments expose, the rate window of the queue-time rule, and the
// namespace.
const (
	DefaultGPUUtilizationMetric  = "triton_gpu_utilization"
	DefaultQueueTimeMetric       = "triton_queue_time_us_per_request"
	DefaultPendingRequestsMetric = "triton_pending_requests"
	DefaultRateWindow            = time.Minute
	DefaultNamespace             = "default"
)

// HPAOptions describes the autoscaler to write.
type HPAOptions struct {
	// Deployment is the Triton Deployment to scale (required).
	Deployment string
	// Name is the HPA's name; default Deployment.
	Name string
	// Namespace of both; default DefaultNamespace.
	Namespace string
	// Model is the Triton model the queue-time and pending-request rules
	// select (required for those metrics; GPU utilization is per GPU).
	Model string
	// MinReplicas (at least 1) and MaxReplicas (at least MinReplicas).
	MinReplicas, MaxReplicas int
	// Metric is what to scale on, Target its value per pod: GPU utilization
	// in (0, 1], queue time in µs per request, or pending requests per pod.
	// Targets are written in thousandths (Kubernetes' milli-units).
	Metric HPAMetric
	Target float64
	// MetricName is the name the Prometheus adapter exposes the metric
	// under; default the Default*Metric for Metric.
	MetricName string
	// RateWindow is the range of the queue-time rule's rate(); default
	// DefaultRateWindow, whole seconds, at least a few scrape intervals.
	RateWindow time.Duration
	// Notes are extra comment lines for the top of the YAML, such as the
	// measured capacity the replica counts come from.
	Notes []string
}

var (
	// Kubernetes object names (RFC 1123 subdomain) and namespaces (label).
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	dns1123Label     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// Prometheus metric names, as the custom metrics API serves them.
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
)

// withDefaults fills o's defaults and checks it.
func (o HPAOptions) withDefaults() (HPAOptions, error) {
	if o.Name == "" {
		o.Name = o.Deployment
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.RateWindow == 0 {
		o.RateWindow = DefaultRateWindow
	}
	if o.MetricName == "" {
		switch o.Metric {
		case ScaleOnGPUUtilization:
			o.MetricName = DefaultGPUUtilizationMetric
		case ScaleOnQueueTime:
			o.MetricName = DefaultQueueTimeMetric
		case ScaleOnPendingRequests:
			o.MetricName = DefaultPendingRequestsMetric
		}
	}
	switch {
	case o.Deployment == "":
		return o, fmt.Errorf("HPA: no Deployment named; name the Triton Deployment to scale")
	case len(o.Deployment) > 253 || !dns1123Subdomain.MatchString(o.Deployment):
		return o, fmt.Errorf("HPA: Deployment %s is not a Kubernetes name (lower-case letters, digits, '-' and '.')", textsafe.Quote(o.Deployment))
	case len(o.Name) > 253 || !dns1123Subdomain.MatchString(o.Name):
		return o, fmt.Errorf("HPA: name %s is not a Kubernetes name (lower-case letters, digits, '-' and '.')", textsafe.Quote(o.Name))
	case len(o.Namespace) > 63 || !dns1123Label.MatchString(o.Namespace):
		return o, fmt.Errorf("HPA: namespace %s is not a Kubernetes namespace (lower-case letters, digits and '-', at most 63)", textsafe.Quote(o.Namespace))
	case o.MinReplicas < 1:
		return o, fmt.Errorf("HPA: minReplicas %d: give at least 1", o.MinReplicas)
	case o.MaxReplicas < o.MinReplicas:
		return o, fmt.Errorf("HPA: maxReplicas %d is below minReplicas %d", o.MaxReplicas, o.MinReplicas)
	case o.MaxReplicas > math.MaxInt32:
		return o, fmt.Errorf("HPA: maxReplicas %d is too large", o.MaxReplicas)
	case o.Metric < ScaleOnGPUUtilization || o.Metric > ScaleOnPendingRequests:
		return o, fmt.Errorf("HPA: unknown metric %v; scale on GPU utilization, queue time or pending requests", o.Metric)
	case !metricName.MatchString(o.MetricName):
		return o, fmt.Errorf("HPA: metric name %s is not a Prometheus metric name", textsafe.Quote(o.MetricName))
	case math.IsNaN(o.Target) || math.IsInf(o.Target, 0) || o.Target <= 0:
		return o, fmt.Errorf("HPA: target %v for %v: give a positive number", o.Target, o.Metric)
	case o.Metric == ScaleOnGPUUtilization && o.Target > 1:
		return o, fmt.Errorf("HPA: GPU utilization target %v: give a fraction in (0, 1], such as 0.85", o.Target)
	case math.Round(o.Target*1000) < 1:
		return o, fmt.Errorf("HPA: target %v for %v is below 0.001, the smallest a Kubernetes quantity here holds", o.Target, o.Metric)
	case o.Target > 1e15:
		return o, fmt.Errorf("HPA: target %v for %v is too large", o.Target, o.Metric)
	case o.Metric != ScaleOnGPUUtilization && o.Model == "":
		return o, fmt.Errorf("HPA: scaling on %v needs the Triton model's name", o.Metric)
	case strings.ContainsFunc(o.Model, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return o, fmt.Errorf("HPA: model name %s holds control characters", textsafe.Quote(o.Model))
	case o.RateWindow < time.Second || o.RateWindow%time.Second != 0:
		return o, fmt.Errorf("HPA: rate window %v: give whole seconds, at least a few scrape intervals", o.RateWindow)
	}
	for _, n := range o.Notes {
		if strings.ContainsAny(n, "\r\n") {
			return o, fmt.Errorf("HPA: note %s spans lines; give one line per note", textsafe.Quote(n))
		}
	}
	return o, nil
}

// quantity writes v as a Kubernetes quantity: an integer as is, anything
// else in thousandths ("850m" for 0.85), which the API server keeps exact.
func quantity(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	m := int64(math.Round(v * 1000))
	if m%1000 == 0 {
		return strconv.FormatInt(m/1000, 10)
	}
	return strconv.FormatInt(m, 10) + "m"
}

// The HPA, as the fields of autoscaling/v2 that it sets. Local types keep
// k8s.io/api out of the binary (it adds about 10 MB); the tests parse the
// YAML strictly into k8s.io/api's types.
type (
	hpaObject struct {
		APIVersion string      `yaml:"apiVersion"`
		Kind       string      `yaml:"kind"`
		Metadata   hpaMetadata `yaml:"metadata"`
		Spec       hpaSpec     `yaml:"spec"`
	}
	hpaMetadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	}
	hpaSpec struct {
		ScaleTargetRef hpaTargetRef `yaml:"scaleTargetRef"`
		MinReplicas    int          `yaml:"minReplicas"`
		MaxReplicas    int          `yaml:"maxReplicas"`
		Metrics        []hpaMetric  `yaml:"metrics"`
	}
	hpaTargetRef struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Name       string `yaml:"name"`
	}
	hpaMetric struct {
		Type string        `yaml:"type"`
		Pods hpaPodsMetric `yaml:"pods"`
	}
	hpaPodsMetric struct {
		Metric struct {
			Name string `yaml:"name"`
		} `yaml:"metric"`
		Target struct {
			Type         string `yaml:"type"`
			AverageValue string `yaml:"averageValue"`
		} `yaml:"target"`
	}
)

// adapterRule is one prometheus-adapter rule (its config's rules: list).
type adapterRule struct {
	SeriesQuery string `yaml:"seriesQuery"`
	Resources   struct {
		Overrides map[string]struct {
			Resource string `yaml:"resource"`
		} `yaml:"overrides"`
	} `yaml:"resources"`
	Name struct {
		As string `yaml:"as"`
	} `yaml:"name"`
	MetricsQuery string `yaml:"metricsQuery"`
}

// rule returns the adapter rule that serves o's metric per pod, and what
// the metric means (comment lines).
func (o HPAOptions) rule() (adapterRule, []string) {
	var r adapterRule
	r.Resources.Overrides = map[string]struct {
		Resource string `yaml:"resource"`
	}{"namespace": {"namespace"}, "pod": {"pod"}}
	r.Name.As = o.MetricName
	// PromQL strings take Go's escapes, so a quoted model name is a valid
	// label matcher whatever it holds.
	model := "model=" + strconv.Quote(o.Model)
	switch o.Metric {
	case ScaleOnGPUUtilization:
		r.SeriesQuery = `nv_gpu_utilization{namespace!="",pod!=""}`
		r.MetricsQuery = `avg by (<<.GroupBy>>) (<<.Series>>{<<.LabelMatchers>>})`
		return r, []string{"the average over a pod's GPUs of Triton's nv_gpu_utilization (0..1)."}
	case ScaleOnQueueTime:
		w := promDuration(o.RateWindow)
		r.SeriesQuery = `nv_inference_queue_duration_us{namespace!="",pod!="",` + model + `}`
		// The denominator's floor turns an idle pod's 0/0 into 0 rather
		// than NaN, which the HPA would reject.
		r.MetricsQuery = `sum by (<<.GroupBy>>) (rate(<<.Series>>{<<.LabelMatchers>>,` + model + `}[` + w + `]))` +
			` / clamp_min(sum by (<<.GroupBy>>) (rate(nv_inference_request_success{<<.LabelMatchers>>,` + model + `}[` + w + `])), 1e-9)`
		return r, []string{
			fmt.Sprintf("a pod's server queue time per successful request of model %s, in µs:", o.Model),
			fmt.Sprintf("the rate over %s of Triton's nv_inference_queue_duration_us divided by that of", w),
			"nv_inference_request_success, summed over versions and GPUs.",
		}
	default:
		r.SeriesQuery = `nv_inference_pending_request_count{namespace!="",pod!="",` + model + `}`
		r.MetricsQuery = `sum by (<<.GroupBy>>) (<<.Series>>{<<.LabelMatchers>>,` + model + `})`
		return r, []string{
			fmt.Sprintf("the requests of model %s waiting in a pod's Triton queue, not yet executing:", o.Model),
			"Triton's nv_inference_pending_request_count, summed over versions.",
		}
	}
}

// HPAYAML returns an autoscaling/v2 HorizontalPodAutoscaler for o as YAML,
// headed by comments that state every assumption it rests on, including the
// Prometheus adapter rule that serves its metric.
func HPAYAML(o HPAOptions) ([]byte, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	rule, meaning := o.rule()
	ruleYAML, err := marshal([]adapterRule{rule})
	if err != nil {
		return nil, err
	}

	m := hpaMetric{Type: "Pods"}
	m.Pods.Metric.Name = o.MetricName
	m.Pods.Target.Type = "AverageValue"
	m.Pods.Target.AverageValue = quantity(o.Target)
	obj := hpaObject{
		APIVersion: "autoscaling/v2",
		Kind:       "HorizontalPodAutoscaler",
		Metadata:   hpaMetadata{Name: o.Name, Namespace: o.Namespace},
		Spec: hpaSpec{
			ScaleTargetRef: hpaTargetRef{APIVersion: "apps/v1", Kind: "Deployment", Name: o.Deployment},
			MinReplicas:    o.MinReplicas,
			MaxReplicas:    o.MaxReplicas,
			Metrics:        []hpaMetric{m},
		},
	}
	body, err := marshal(obj)
	if err != nil {
		return nil, err
	}

	var b bytes.Buffer
	line := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		if s == "" {
			b.WriteString("#\n")
			return
		}
		b.WriteString("# " + s + "\n")
	}
	line("HorizontalPodAutoscaler for the Triton Deployment %s in namespace %s: %d to %d replicas,", o.Deployment, o.Namespace, o.MinReplicas, o.MaxReplicas)
	line("scaling on %v: target %s, averaged over the pods.", o.Metric, targetText(o))
	for _, n := range o.Notes {
		line("%s", n)
	}
	line("")
	line("Assumptions:")
	line("- Each pod of Deployment %s runs one Triton server, and Prometheus scrapes its metrics", o.Deployment)
	line("  endpoint (port 8002, /metrics) with the pod's namespace and name as labels namespace and pod.")
	line("- The Prometheus adapter (kubernetes-sigs/prometheus-adapter) serves that Prometheus through")
	line("  the custom metrics API (custom.metrics.k8s.io) with this rule in its config's rules list:")
	line("")
	for _, l := range strings.Split(strings.TrimRight(string(ruleYAML), "\n"), "\n") {
		line("    %s", l)
	}
	line("")
	line("- %s is %s", o.MetricName, meaning[0])
	for _, l := range meaning[1:] {
		line("  %s", l)
	}
	switch o.Metric {
	case ScaleOnGPUUtilization:
		line("- Every GPU of a pod serves this deployment's models, so their average is the pod's load.")
		line("  With dynamic batching utilization can saturate before latency does; then scale on queue")
		line("  time or pending requests instead.")
	case ScaleOnQueueTime:
		line("- Queue time grows with load past the knee while compute per request stays flat, so it")
		line("  tracks latency where GPU utilization has already saturated.")
	case ScaleOnPendingRequests:
		line("- Requests waiting in the queue grow with load past the knee, even when GPU utilization")
		line("  has saturated.")
	}
	line("- The HPA adds replicas while the average over pods is above the target and removes them")
	line("  while it is below; no behavior is set, so Kubernetes' defaults apply (scale down only")
	line("  after 5 minutes of lower recommendations).")
	b.Write(body)
	return b.Bytes(), nil
}

// promDuration writes d (whole seconds) as a PromQL range.
func promDuration(d time.Duration) string {
	if d%time.Minute == 0 {
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

// targetText is the target with its unit, for the header comment.
func targetText(o HPAOptions) string {
	switch o.Metric {
	case ScaleOnGPUUtilization:
		return quantity(o.Target) + " = " + strconv.FormatFloat(math.Round(o.Target*1000)/10, 'f', -1, 64) + "%"
	case ScaleOnQueueTime:
		return quantity(o.Target) + " µs"
	default:
		return quantity(o.Target) + " requests"
	}
}

// marshal writes v as YAML with Kubernetes' customary 2-space indent.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("HPA: write YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("HPA: write YAML: %w", err)
	}
	return b.Bytes(), nil
}

// CheckHPANames checks, before any measurement, the names the
// HorizontalPodAutoscaler will carry (the Deployment and its namespace),
// with the messages HPAYAML would give at the end of the plan.
func CheckHPANames(deployment, namespace string) error {
	_, err := HPAOptions{Deployment: deployment, Namespace: namespace, MinReplicas: 1, MaxReplicas: 1, Metric: ScaleOnGPUUtilization, Target: 1}.withDefaults()
	return err
}
