package sim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/tritontop/tritontop/triton/pb"
)

// modelConfigFile is the name of a model's configuration in its directory.
const modelConfigFile = "config.pbtxt"

// LoadRepositoryDir reads a Triton model repository: every subdirectory is
// a model, configured by its config.pbtxt (Triton's ModelConfig in
// protobuf text; without one, Triton's auto-completion has only the
// directory's name and files to go on), served in the numeric version
// subdirectories its version_policy picks (default: the latest one).
// Each configuration is auto-completed, normalized and checked as Triton
// does (SpecFromConfig), and its models run on CPU instances: the
// repository is CPUOnly, as a Triton without GPUs (a caller may still give
// it GPUs). Output labels are read from each output's label_filename.
//
// Triton refuses to start with a model it cannot load (its default
// --exit-on-error); so does this: the error is one line naming the
// model's directory or config.pbtxt and what is wrong, in Triton's words.
func LoadRepositoryDir(dir string) (Repository, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Repository{}, fmt.Errorf("model repository %s: %w", dir, err)
	}
	repo := Repository{CPUOnly: true}
	for _, ent := range entries {
		path := filepath.Join(dir, ent.Name())
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			continue // Triton polls directories only
		}
		spec, err := readModelDir(path, ent.Name())
		if err != nil {
			return Repository{}, fmt.Errorf("model repository %s: %w", dir, err)
		}
		repo.Models = append(repo.Models, spec)
	}
	if len(repo.Models) == 0 {
		return Repository{}, fmt.Errorf("model repository %s: no model directories; a model is a directory holding its %s and a version directory such as 1/", dir, modelConfigFile)
	}
	if err := repo.check(); err != nil {
		return Repository{}, fmt.Errorf("model repository %s: %w", dir, err)
	}
	return repo, nil
}

// readModelDir reads one model's directory.
func readModelDir(path, name string) (ModelSpec, error) {
	cfgPath := filepath.Join(path, modelConfigFile)
	where := fmt.Sprintf("model '%s' (%s)", name, cfgPath)
	cfg, err := ReadModelConfig(cfgPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cfg = &pb.ModelConfig{}
		where = fmt.Sprintf("model '%s' (%s, no %s)", name, path, modelConfigFile)
	case err != nil:
		return ModelSpec{}, fmt.Errorf("model '%s': %w", name, err)
	}
	existing, files, err := versionDirs(path)
	if err != nil {
		return ModelSpec{}, fmt.Errorf("%s: %w", where, err)
	}
	if err := autoComplete(cfg, name, files); err != nil {
		return ModelSpec{}, fmt.Errorf("%s: %w", where, err)
	}
	spec, err := specFromCompleted(cfg, name)
	if err != nil {
		return ModelSpec{}, fmt.Errorf("%s: %w", where, err)
	}
	spec.Versions = versionsToLoad(spec.Config.GetVersionPolicy(), existing)
	if len(spec.Versions) == 0 {
		return ModelSpec{}, fmt.Errorf("%s: at least one version must be available under the version policy of model '%s'; add a version directory such as %s",
			where, name, filepath.Join(path, "1"))
	}
	spec.Source, spec.files = cfgPath, files
	readLabels(path, spec.Outputs)
	return spec, nil
}

// ReadModelConfig reads a config.pbtxt into Triton's ModelConfig. A file
// that is not one is an error naming the file, with the parser's words.
func ReadModelConfig(path string) (*pb.ModelConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg := &pb.ModelConfig{}
	if err := prototext.Unmarshal(data, cfg); err != nil {
		msg := strings.TrimPrefix(err.Error(), "proto: ")
		return nil, &ConfigError{Msg: fmt.Sprintf("failed to read text proto from %s: %s", path, msg)}
	}
	return cfg, nil
}

// versionDirs lists a model directory's version numbers as Triton reads
// them (the leading digits of a subdirectory's name; names with a leading
// zero, other names and Triton's warmup, initial_state and configs folders
// are not versions), and what auto-completion sees: the names in the
// first subdirectory by name.
func versionDirs(path string) ([]int64, versionFiles, error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, versionFiles{}, err
	}
	var subdirs []string
	for _, ent := range entries {
		if fi, err := os.Stat(filepath.Join(path, ent.Name())); err == nil && fi.IsDir() {
			subdirs = append(subdirs, ent.Name())
		}
	}
	var versions []int64
	for _, d := range subdirs {
		if d == "warmup" || d == "initial_state" || d == "configs" || len(d) > 1 && d[0] == '0' {
			continue
		}
		if v, ok := parseCInt(d, 64); ok && v >= 0 {
			versions = append(versions, v)
		}
	}
	var files versionFiles
	if len(subdirs) > 0 {
		files.hasVersion = true
		inner, err := os.ReadDir(filepath.Join(path, subdirs[0]))
		if err != nil {
			return nil, versionFiles{}, err
		}
		for _, ent := range inner {
			n := ent.Name()
			if fi, err := os.Stat(filepath.Join(path, subdirs[0], n)); err == nil && fi.IsDir() {
				n += "/"
			}
			files.names = append(files.names, n)
		}
	}
	slices.Sort(versions)
	return slices.Compact(versions), files, nil
}

// versionsToLoad picks the versions a version policy serves among those
// there are, ascending: the latest N, all, or the specific ones that exist.
func versionsToLoad(policy *pb.ModelVersionPolicy, existing []int64) []int64 {
	var out []int64
	switch p := policy.GetPolicyChoice().(type) {
	case *pb.ModelVersionPolicy_Specific_:
		for _, v := range p.Specific.GetVersions() {
			if slices.Contains(existing, v) && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		slices.Sort(out)
	case *pb.ModelVersionPolicy_All_:
		out = slices.Clone(existing)
	default:
		n := int(min(uint32(len(existing)), policy.GetLatest().GetNumVersions()))
		out = slices.Clone(existing[len(existing)-n:])
	}
	return out
}

// readLabels reads each output's label file, one class name a line; an
// output whose file cannot be read has no labels.
func readLabels(dir string, outputs []TensorSpec) {
	for i, o := range outputs {
		if o.LabelFilename == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, o.LabelFilename))
		if err != nil {
			continue
		}
		outputs[i].Labels = labelLines(string(data))
	}
}
