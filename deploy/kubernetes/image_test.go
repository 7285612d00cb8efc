package kubernetes

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// dockerfile is the repository's Dockerfile, which builds the Job's image.
const dockerfile = "../../Dockerfile"

// parseDockerfile parses the Dockerfile with BuildKit's own parser (the one
// `docker build` uses), failing on any error or lint warning.
func parseDockerfile(t *testing.T) []instructions.Stage {
	t.Helper()
	f, err := os.Open(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	for _, w := range res.Warnings {
		t.Errorf("Dockerfile: %s at %v", w.Short, w.Location)
	}
	lint := linter.New(&linter.Config{Warn: func(rule, desc, url, msg string, loc []parser.Range) {
		t.Errorf("Dockerfile lint %s at %v: %s", rule, loc, msg)
	}})
	stages, _, err := instructions.Parse(res.AST, lint)
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	return stages
}

// imageUser is the user the image's final stage runs as.
func imageUser(t *testing.T) string {
	t.Helper()
	stages := parseDockerfile(t)
	user := ""
	for _, c := range stages[len(stages)-1].Commands {
		if u, ok := c.(*instructions.UserCommand); ok {
			user = u.User
		}
	}
	if user == "" {
		t.Fatal("the Dockerfile's final stage sets no USER: the image would run as root")
	}
	uid, _, _ := strings.Cut(user, ":")
	return uid
}

// TestDockerfile: a multi-stage build, a Go builder at the module's Go
// version compiling a static binary, and a small runtime image that runs
// it as a non-root user. Docker itself is not needed: BuildKit's parser
// reads the file as a build would.
func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t)
	if len(stages) != 2 {
		t.Fatalf("%d stages, want a builder and a runtime", len(stages))
	}
	build, run := stages[0], stages[1]

	goMod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var goVersion string
	for _, l := range strings.Split(string(goMod), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			goVersion = strings.TrimSpace(v)
		}
	}
	// The go directive is 1.N.x; golang:1.N is the newest 1.N release.
	parts := strings.SplitN(goVersion, ".", 3)
	if len(parts) < 2 {
		t.Fatalf("go.mod's go directive %q", goVersion)
	}
	if want := "golang:" + parts[0] + "." + parts[1]; build.BaseName != want {
		t.Errorf("builder FROM %s, want %s (go.mod says go %s)", build.BaseName, want, goVersion)
	}

	var binary string
	for _, c := range build.Commands {
		r, ok := c.(*instructions.RunCommand)
		if !ok {
			continue
		}
		line := strings.Join(r.CmdLine, " ")
		if !strings.Contains(line, "go build") {
			continue
		}
		if !strings.Contains(line, "CGO_ENABLED=0") {
			t.Errorf("go build without CGO_ENABLED=0 is not static: %s", line)
		}
		if !strings.Contains(line, "./cmd/tritontop") {
			t.Errorf("go build does not build ./cmd/tritontop: %s", line)
		}
		fields := strings.Fields(line)
		if i := slices.Index(fields, "-o"); i >= 0 && i+1 < len(fields) {
			binary = fields[i+1]
		}
	}
	if binary == "" {
		t.Fatal("the builder has no `go build -o PATH ./cmd/tritontop`")
	}

	if !strings.HasPrefix(run.BaseName, "gcr.io/distroless/static") && run.BaseName != "scratch" {
		t.Errorf("runtime FROM %s, want distroless/static or scratch", run.BaseName)
	}
	var installed, entrypoint string
	var exposed []string
	for _, c := range run.Commands {
		switch c := c.(type) {
		case *instructions.CopyCommand:
			if c.From == build.Name && slices.Contains(c.SourcePaths, binary) {
				installed = c.DestPath
			}
		case *instructions.EntrypointCommand:
			if c.PrependShell {
				t.Errorf("ENTRYPOINT in shell form: the runtime image has no shell")
			}
			entrypoint = strings.Join(c.CmdLine, " ")
		case *instructions.ExposeCommand:
			exposed = append(exposed, c.Ports...)
		case *instructions.RunCommand:
			t.Errorf("RUN in the runtime stage: it has no shell (%v)", c.CmdLine)
		}
	}
	if installed == "" || entrypoint != installed {
		t.Errorf("binary %s copied to %q, entrypoint %q: want the entrypoint to be the copied binary", binary, installed, entrypoint)
	}
	if !slices.Contains(exposed, "9099") {
		t.Errorf("EXPOSE %v lacks the Prometheus port 9099", exposed)
	}
	if uid := imageUser(t); uid == "0" || uid == "root" || strings.TrimLeft(uid, "0123456789") != "" {
		t.Errorf("USER %s: want a numeric non-root user, so that runAsNonRoot can check it", uid)
	}
}

// TestDockerignore: the build context leaves out what the build does not
// read, and keeps what it does.
func TestDockerignore(t *testing.T) {
	b, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}
	for _, p := range []string{".git", "**/testdata"} {
		if !slices.Contains(patterns, p) {
			t.Errorf(".dockerignore does not leave out %s", p)
		}
	}
	for _, p := range patterns {
		for _, needed := range []string{"go.mod", "go.sum", "cmd", "*.go"} {
			if p == needed || p == "*" {
				t.Errorf(".dockerignore leaves out %s, which the build needs", needed)
			}
		}
	}
}
