package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/tritontop/tritontop/session"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestLoadFlags keeps testdata/TestLoadFlags.golden equal to the load
// command's flags, one per line with "value" or "bool": the Kubernetes
// manifests' test (deploy/kubernetes) checks the Job's arguments against
// this file, so it sees the real flag set. After adding a flag:
// go test ./cmd/tritontop -run TestLoadFlags -update.
func TestLoadFlags(t *testing.T) {
	c := session.Defaults()
	fs := newLoadFlagSet("tritontop", &c, io.Discard, new(error))
	var lines []string
	fs.VisitAll(func(fl *flag.Flag) {
		kind := "value"
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			kind = "bool"
		}
		lines = append(lines, fl.Name+" "+kind)
	})
	sort.Strings(lines)
	golden.RequireEqual(t, strings.Join(lines, "\n")+"\n")
}

// jobArgs reads the Job's container arguments and its worker count.
func jobArgs(t *testing.T) ([]string, int) {
	t.Helper()
	var job batchv1.Job
	b, err := os.ReadFile("../../deploy/kubernetes/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &job); err != nil {
		t.Fatal(err)
	}
	if job.Spec.Completions == nil || len(job.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("job.yaml has no completions or not one container")
	}
	return job.Spec.Template.Spec.Containers[0].Args, int(*job.Spec.Completions)
}

var jobVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// substitute puts the ConfigMap's values and worker i's index into the
// Job's arguments, as Kubernetes does, with a start time a minute ahead in
// place of the ConfigMap's placeholder.
func substitute(t *testing.T, args []string, i int) []string {
	t.Helper()
	var cm corev1.ConfigMap
	b, err := os.ReadFile("../../deploy/kubernetes/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &cm); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(i)}
	for k, v := range cm.Data {
		vars[k] = v
	}
	vars["START_AT"] = time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	out := make([]string, len(args))
	for j, a := range args {
		out[j] = jobVar.ReplaceAllStringFunc(a, func(ref string) string {
			name := jobVar.FindStringSubmatch(ref)[1]
			v, ok := vars[name]
			if !ok {
				t.Fatalf("$(%s) in the Job's arguments is defined nowhere", name)
			}
			return v
		})
	}
	return out
}

// TestSubstitute: $(VAR) references take the ConfigMap's values and the
// worker's index.
func TestSubstitute(t *testing.T) {
	got := substitute(t, []string{"--worker-index", "$(JOB_COMPLETION_INDEX)", "/out/w$(JOB_COMPLETION_INDEX).jsonl"}, 3)
	if fmt.Sprint(got) != "[--worker-index 3 /out/w3.jsonl]" {
		t.Errorf("substitute = %q", got)
	}
}

// TestJobArgsParse: the Job's arguments, as Kubernetes gives them to each
// worker, are a valid run of tritontop: the worker's share of the load,
// headless, with a start time and a Prometheus endpoint.
func TestJobArgsParse(t *testing.T) {
	args, workers := jobArgs(t)
	// The Job's run files go to the volume mounted at /out, which this
	// machine lacks: every output is checked before a run, so the test's
	// own directory stands in for it.
	out := t.TempDir()
	for i := range workers {
		a := substitute(t, args, i)
		for j := range a {
			if strings.HasPrefix(a[j], "/out/") {
				a[j] = filepath.Join(out, strings.TrimPrefix(a[j], "/out/"))
			}
		}
		c, err := parseLoadFlags("tritontop", a, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("worker %d: tritontop refuses the Job's arguments %q: %v", i, a, err)
		}
		if c.Workers.Count != workers || c.Workers.Index != i || c.Workers.StartAt == "" || c.Workers.PrometheusAddr == "" || !c.Headless {
			t.Errorf("worker %d: %+v", i, c.Workers)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
}
