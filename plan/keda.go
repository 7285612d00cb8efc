package plan

import (
	"bytes"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// DefaultPrometheusURL is the Prometheus a KEDA trigger queries when none
// is given: the in-cluster service of the kube-prometheus stack.
const DefaultPrometheusURL = "http://prometheus-operated.monitoring.svc:9090"

// KEDAOptions describes the KEDA ScaledObject to write: the same scaling as
// the HPA (deployment, range, metric and target), read by KEDA's Prometheus
// scaler straight from Prometheus, so that no metrics adapter is needed.
type KEDAOptions struct {
	HPA HPAOptions
	// PrometheusURL is the Prometheus server KEDA queries; default
	// DefaultPrometheusURL.
	PrometheusURL string
}

// The ScaledObject, as the fields of keda.sh/v1alpha1 that it sets; the
// tests check it against KEDA's CRD schema.
type (
	kedaObject struct {
		APIVersion string      `yaml:"apiVersion"`
		Kind       string      `yaml:"kind"`
		Metadata   hpaMetadata `yaml:"metadata"`
		Spec       kedaSpec    `yaml:"spec"`
	}
	kedaSpec struct {
		ScaleTargetRef  hpaTargetRef  `yaml:"scaleTargetRef"`
		MinReplicaCount int           `yaml:"minReplicaCount"`
		MaxReplicaCount int           `yaml:"maxReplicaCount"`
		Triggers        []kedaTrigger `yaml:"triggers"`
	}
	kedaTrigger struct {
		Type       string            `yaml:"type"`
		MetricType string            `yaml:"metricType"`
		Metadata   map[string]string `yaml:"metadata"`
	}
)

// query is the PromQL KEDA's trigger reads for o, over the deployment's
// pods, and its metric type: a sum over pods that KEDA divides by the
// replicas (AverageValue), or a ratio already per request (Value, which the
// HPA scales proportionally).
func (o HPAOptions) query() (string, string) {
	pods := fmt.Sprintf(`namespace=%s,pod=~%s`, strconv.Quote(o.Namespace), strconv.Quote(o.Deployment+"-.*"))
	model := "model=" + strconv.Quote(o.Model)
	w := promDuration(o.RateWindow)
	switch o.Metric {
	case ScaleOnGPUUtilization:
		return `sum(avg by (pod) (nv_gpu_utilization{` + pods + `}))`, "AverageValue"
	case ScaleOnQueueTime:
		return `sum(rate(nv_inference_queue_duration_us{` + pods + `,` + model + `}[` + w + `]))` +
			` / clamp_min(sum(rate(nv_inference_request_success{` + pods + `,` + model + `}[` + w + `])), 1e-9)`, "Value"
	default:
		return `sum(nv_inference_pending_request_count{` + pods + `,` + model + `})`, "AverageValue"
	}
}

// KEDAYAML returns a KEDA ScaledObject (keda.sh/v1alpha1) for o as YAML,
// headed by comments that state what it assumes.
func KEDAYAML(k KEDAOptions) ([]byte, error) {
	o, err := k.HPA.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("ScaledObject: %s", strings.TrimPrefix(err.Error(), "HPA: "))
	}
	server := k.PrometheusURL
	if server == "" {
		server = DefaultPrometheusURL
	}
	if u, err := url.Parse(server); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ScaledObject: Prometheus address %s: give an http:// or https:// URL", textsafe.Quote(server))
	}
	q, metricType := o.query()
	obj := kedaObject{
		APIVersion: "keda.sh/v1alpha1",
		Kind:       "ScaledObject",
		Metadata:   hpaMetadata{Name: o.Name, Namespace: o.Namespace},
		Spec: kedaSpec{
			ScaleTargetRef:  hpaTargetRef{APIVersion: "apps/v1", Kind: "Deployment", Name: o.Deployment},
			MinReplicaCount: o.MinReplicas,
			MaxReplicaCount: o.MaxReplicas,
			Triggers: []kedaTrigger{{Type: "prometheus", MetricType: metricType, Metadata: map[string]string{
				"serverAddress": server,
				"query":         q,
				"threshold":     strconv.FormatFloat(o.Target, 'f', -1, 64),
			}}},
		},
	}
	body, err := marshal(obj)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	line := func(format string, args ...any) {
		if s := fmt.Sprintf(format, args...); s != "" {
			b.WriteString("# " + s + "\n")
		} else {
			b.WriteString("#\n")
		}
	}
	line("KEDA ScaledObject for the Triton Deployment %s in namespace %s: %d to %d replicas,", o.Deployment, o.Namespace, o.MinReplicas, o.MaxReplicas)
	if metricType == "Value" {
		line("scaling on %v: target %s, over the pods together.", o.Metric, targetText(o))
	} else {
		line("scaling on %v: target %s per pod.", o.Metric, targetText(o))
	}
	for _, n := range o.Notes {
		line("%s", n)
	}
	line("")
	line("Assumptions:")
	line("- KEDA (keda.sh, v2) runs in the cluster; it creates and drives the HPA itself, so no")
	line("  Prometheus adapter is needed: its Prometheus scaler queries %s.", server)
	line("- Prometheus scrapes each Triton pod's metrics endpoint (port 8002, /metrics) with the pod's")
	line("  namespace and name as labels namespace and pod; the pods are named %s-….", o.Deployment)
	switch metricType {
	case "Value":
		line("- The query is already per request; metricType Value makes the HPA scale the replicas in")
		line("  proportion to it over the threshold.")
	default:
		line("- The query sums over the pods; metricType AverageValue makes the HPA divide it by the")
		line("  replicas and add replicas while the average is over the threshold.")
	}
	line("- No advanced.horizontalPodAutoscalerConfig is set: Kubernetes' defaults apply (scale down")
	line("  only after 5 minutes of lower recommendations).")
	b.Write(body)
	return b.Bytes(), nil
}
