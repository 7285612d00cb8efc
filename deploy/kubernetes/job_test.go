// Package kubernetes holds the manifests that run tritontop as a Kubernetes
// Indexed Job (load from many machines); its tests check them against
// Kubernetes' own API types and tritontop's flags.
package kubernetes

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// flagList is the file in which cmd/tritontop's tests keep the load
// command's real flags, one per line: the name, then "value" or "bool"
// (cmd/tritontop's TestLoadFlags checks it against the flag set itself).
const flagList = "../../cmd/tritontop/testdata/TestLoadFlags.golden"

// cliFlags are the flags tritontop's load command accepts, and whether each
// takes a value, as flagList lists them.
func cliFlags(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(flagList)
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, kind, ok := strings.Cut(line, " ")
		if !ok || kind != "value" && kind != "bool" {
			t.Fatalf("%s: bad line %q", flagList, line)
		}
		flags[name] = kind == "value"
	}
	return flags
}

// readStrict parses a manifest strictly (unknown or repeated fields are
// errors) into a Kubernetes API type.
func readStrict(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// parsedFlag is one flag of a command line with its value.
type parsedFlag struct {
	name, value string
	hasValue    bool
}

// parseArgs splits args as Go's flag package does (-x v, --x v, --x=v),
// against the flags known (name: takes a value), and says what it could
// not accept.
func parseArgs(args []string, known map[string]bool) ([]parsedFlag, []error) {
	var out []parsedFlag
	var errs []error
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			errs = append(errs, fmt.Errorf("argument %q is not a flag: tritontop takes no positional arguments here", a))
			continue
		}
		name := strings.TrimLeft(a, "-")
		value, inline := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, value, inline = k, v, true
		}
		takesValue, ok := known[name]
		if !ok {
			errs = append(errs, fmt.Errorf("flag %s is not one tritontop accepts", a))
			continue
		}
		f := parsedFlag{name: name}
		switch {
		case !takesValue:
		case inline:
			f.value, f.hasValue = value, true
		case i+1 < len(args):
			i++
			f.value, f.hasValue = args[i], true
		default:
			errs = append(errs, fmt.Errorf("flag %s has no value", a))
		}
		out = append(out, f)
	}
	return out, errs
}

// varRef matches Kubernetes' $(VAR) references in args.
var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// The Job is an Indexed batch/v1 Job whose workers each take their share
// from the completion index, run headless with the flags the CLI accepts,
// write a run file to the shared volume and serve Prometheus metrics where
// the scrape annotations say.
func TestJob(t *testing.T) {
	var job batchv1.Job
	readStrict(t, "job.yaml", &job)
	var cm corev1.ConfigMap
	readStrict(t, "configmap.yaml", &cm)
	var pvc corev1.PersistentVolumeClaim
	readStrict(t, "pvc.yaml", &pvc)

	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Fatalf("job.yaml is %s %s, want batch/v1 Job", job.APIVersion, job.Kind)
	}
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || pvc.APIVersion != "v1" || pvc.Kind != "PersistentVolumeClaim" {
		t.Errorf("configmap.yaml is %s %s and pvc.yaml %s %s", cm.APIVersion, cm.Kind, pvc.APIVersion, pvc.Kind)
	}
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode = %v, want Indexed", spec.CompletionMode)
	}
	if spec.Completions == nil || spec.Parallelism == nil {
		t.Fatal("completions and parallelism must be set")
	}
	workers := *spec.Completions
	if workers != 4 || *spec.Parallelism != workers {
		t.Errorf("completions = %d, parallelism = %d, want 4 and 4: every worker runs at once", workers, *spec.Parallelism)
	}
	if spec.BackoffLimit == nil {
		t.Error("backoffLimit not set (Kubernetes' default retries 6 times)")
	}
	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy = %q, want Never", pod.RestartPolicy)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if len(c.Command) != 0 {
		t.Errorf("command %v replaces the image's tritontop entrypoint", c.Command)
	}

	// Every $(VAR) must resolve, or Kubernetes passes it on literally.
	defined := map[string]bool{"JOB_COMPLETION_INDEX": true} // set by the Job controller
	for _, e := range c.Env {
		defined[e.Name] = true
	}
	for _, src := range c.EnvFrom {
		if src.ConfigMapRef == nil || src.ConfigMapRef.Name != cm.Name {
			t.Errorf("envFrom %+v is not the ConfigMap %s", src, cm.Name)
			continue
		}
		for k := range cm.Data {
			defined[k] = true
		}
	}
	indexed := 0
	for _, a := range c.Args {
		for _, m := range varRef.FindAllStringSubmatch(a, -1) {
			if !defined[m[1]] {
				t.Errorf("args use $(%s), which neither the ConfigMap nor the container defines", m[1])
			}
			if m[1] == "JOB_COMPLETION_INDEX" {
				indexed++
			}
		}
	}

	flags, errs := parseArgs(c.Args, cliFlags(t))
	for _, err := range errs {
		t.Error(err)
	}
	value := func(name string) string {
		i := slices.IndexFunc(flags, func(f parsedFlag) bool { return f.name == name })
		if i < 0 {
			t.Errorf("args lack --%s", name)
			return ""
		}
		return flags[i].value
	}
	for _, name := range []string{"m", "u", "start-at"} {
		if !varRef.MatchString(value(name)) {
			t.Errorf("-%s %q does not come from the ConfigMap", name, value(name))
		}
	}
	if got := value("worker-index"); got != "$(JOB_COMPLETION_INDEX)" {
		t.Errorf("--worker-index %q, want $(JOB_COMPLETION_INDEX)", got)
	}
	if got := value("workers"); got != strconv.Itoa(int(workers)) {
		t.Errorf("--workers %s, but completions is %d", got, workers)
	}
	rec := value("record")
	if !strings.Contains(rec, "$(JOB_COMPLETION_INDEX)") {
		t.Errorf("--record %s: every worker needs its own file", rec)
	}
	if indexed < 2 {
		t.Errorf("JOB_COMPLETION_INDEX is used %d times in args, want the worker index and the record name", indexed)
	}
	if !slices.ContainsFunc(flags, func(f parsedFlag) bool { return f.name == "headless" }) {
		t.Error("args lack --headless")
	}
	for _, k := range []string{"MODEL", "TRITON_URL", "START_AT"} {
		if cm.Data[k] == "" {
			t.Errorf("ConfigMap has no %s", k)
		}
	}

	// The record lands on the shared volume.
	mounted := false
	for _, vm := range c.VolumeMounts {
		if strings.HasPrefix(rec, strings.TrimSuffix(vm.MountPath, "/")+"/") {
			mounted = true
			i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == vm.Name })
			if i < 0 {
				t.Fatalf("volume %s is mounted but not defined", vm.Name)
			}
			v := pod.Volumes[i]
			if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != pvc.Name {
				if v.EmptyDir == nil {
					t.Errorf("volume %s is neither the claim %s nor an emptyDir", v.Name, pvc.Name)
				}
			}
			if vm.ReadOnly {
				t.Errorf("volume %s is mounted read-only", vm.Name)
			}
		}
	}
	if !mounted {
		t.Errorf("--record %s is not on a mounted volume", rec)
	}
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("claim access modes %v: workers on several nodes write at once, it needs ReadWriteMany", pvc.Spec.AccessModes)
	}

	// Prometheus scrapes the port the workers serve on.
	ann := spec.Template.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("scrape annotations = %v", ann)
	}
	port := ann["prometheus.io/port"]
	if addr := value("prometheus-addr"); !strings.HasSuffix(addr, ":"+port) {
		t.Errorf("--prometheus-addr %s, but Prometheus scrapes port %s", addr, port)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return strconv.Itoa(int(p.ContainerPort)) == port }) {
		t.Errorf("container ports %v do not declare %s", c.Ports, port)
	}

	// Resources: requested, and no CPU limit to throttle the load generator.
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resource requests = %v, want CPU and memory", c.Resources.Requests)
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Error("a CPU limit throttles the load generator and skews its latencies")
	}

	// The image runs as the non-root user the Dockerfile sets.
	sc := pod.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil {
		t.Fatalf("pod securityContext = %+v, want runAsNonRoot with a user", sc)
	}
	if user := imageUser(t); strconv.FormatInt(*sc.RunAsUser, 10) != user {
		t.Errorf("runAsUser %d, but the Dockerfile's user is %s", *sc.RunAsUser, user)
	}
}

// TestParseArgs checks the args splitter the Job test relies on, against
// the real flags.
func TestParseArgs(t *testing.T) {
	known := cliFlags(t)
	for _, name := range []string{"worker-index", "workers", "start-at", "prometheus-addr", "m", "u", "record"} {
		if !known[name] {
			t.Errorf("%s does not list --%s as a flag with a value", flagList, name)
		}
	}
	if v, ok := known["headless"]; !ok || v {
		t.Errorf("%s does not list --headless as a bool flag", flagList)
	}
	got, errs := parseArgs([]string{"-m", "a", "--workers=4", "--headless", "--record", "/out/x"}, known)
	want := []parsedFlag{{"m", "a", true}, {"workers", "4", true}, {"headless", "", false}, {"record", "/out/x", true}}
	if !slices.Equal(got, want) || len(errs) != 0 {
		t.Errorf("parseArgs = %v, %v, want %v", got, errs, want)
	}
	if _, errs := parseArgs([]string{"--no-such-flag", "1", "--record"}, known); len(errs) != 3 {
		t.Errorf("unknown flag, stray argument and missing value gave %v, want 3 errors", errs)
	}
}
