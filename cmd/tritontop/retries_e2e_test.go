package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/record"
)

// simTries reads the simulator's own count of the requests it served to
// model (successes and failures) from its HTTP statistics endpoint.
func simTries(t *testing.T, httpAddr, model string) int64 {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/v2/models/" + model + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		ModelStats []struct {
			InferenceStats struct {
				Success, Fail struct {
					Count int64 `json:"count"`
				}
			} `json:"inference_stats"`
		} `json:"model_stats"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.ModelStats) == 0 {
		t.Fatalf("statistics of %s: %v %+v", model, err, body)
	}
	st := body.ModelStats[0].InferenceStats
	return st.Success.Count + st.Fail.Count
}

// TestRetriesShown runs against `tritontop sim --error-rate 0.2` (its
// failures are INTERNAL): with --retries 3 --retry-codes INTERNAL the
// retries are every try the simulator counted past the requests, and they
// show in the progress line, the text and Markdown summaries, compare, the
// HTML report and the dashboard; with the default codes INTERNAL is not
// retried.
func TestRetriesShown(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: real binary and simulator")
	}
	bin := buildBinary(t)
	_, addrs, _ := startSimCommand(t, bin, "--error-rate", "0.2")
	dir := t.TempDir()
	retried, plain := filepath.Join(dir, "retried.jsonl"), filepath.Join(dir, "plain.jsonl")
	common := []string{"-u", addrs["gRPC"], "-m", "resnet50", "--headless", "--concurrency", "4", "--duration", "2s",
		"--tick", "500ms", "--retries", "3", "--retry-backoff", "1ms"}

	before := simTries(t, addrs["HTTP"], "resnet50")
	code, stdout, stderr := runBinary(t, bin, append(common, "--retry-codes", "INTERNAL", "--record", retried)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	tries := simTries(t, addrs["HTTP"], "resnet50") - before
	run, err := record.ReadAll(retried)
	if err != nil || run.Summary == nil {
		t.Fatalf("run file: %v", err)
	}
	c := run.Summary.Client
	if c.Retries == 0 || c.Requests+c.Cancelled+c.Retries != tries {
		t.Errorf("client: %d requests + %d cancelled + %d retries; the simulator served %d tries", c.Requests, c.Cancelled, c.Retries, tries)
	}
	if !strings.Contains(stderr, "  retries ") {
		t.Errorf("the progress line does not show retries:\n%s", stderr)
	}
	if !strings.Contains(stdout, "retries: ") {
		t.Errorf("the text summary does not show retries:\n%s", stdout)
	}

	code, _, stderr = runBinary(t, bin, append(common, "--record", plain)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	pr, err := record.ReadAll(plain)
	if err != nil || pr.Summary == nil {
		t.Fatalf("run file: %v", err)
	}
	if pc := pr.Summary.Client; pc.Retries != 0 || pc.Errors == 0 {
		t.Errorf("default retry codes: %d retries, %d errors; INTERNAL should fail without a retry", pc.Retries, pc.Errors)
	}

	html := filepath.Join(dir, "report.html")
	for _, args := range [][]string{{"replay", retried, "--markdown"}, {"compare", retried, plain}, {"report", retried, "-o", html}} {
		code, out, stderr := runBinary(t, bin, args...)
		if code != 0 {
			t.Fatalf("tritontop %v: exit %d: %s", args, code, stderr)
		}
		if args[0] == "report" {
			b, err := os.ReadFile(html)
			if err != nil {
				t.Fatal(err)
			}
			out = string(b)
		}
		if !strings.Contains(out, "retries") {
			t.Errorf("tritontop %v does not show the retries:\n%s", args, out)
		}
	}

	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (CI installs it): the dashboard is not checked")
	}
	tmuxArgs := []string{"-u", addrs["gRPC"], "-m", "resnet50", "--concurrency", "4", "--retries", "3", "--retry-codes", "INTERNAL"}
	_, capture, exit := tmuxRun(t, bin, "retries", tmuxArgs...)
	screen, ok := waitScreen(capture, func() {}, func(s string) bool { return strings.Contains(s, "retries ") })
	if !ok {
		t.Errorf("the dashboard does not show the retries:\n%s", screen)
	}
	if code := exit(); code != "0" {
		t.Errorf("dashboard exited with %s", code)
	}
}
