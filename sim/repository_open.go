package sim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// OpenRepository opens the model repository a --model-repository value
// names: a built-in set by name (BuiltinDemo, the default for "", or
// BuiltinExamples), a Triton model repository directory
// (LoadRepositoryDir), or a description file (LoadRepository). A file or
// directory named like a built-in set is written ./NAME.
func OpenRepository(name string) (Repository, error) {
	if name == "" {
		name = BuiltinDemo
	}
	if repo, ok := BuiltinRepository(name); ok {
		return repo, nil
	}
	fi, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Repository{}, fmt.Errorf("model repository %s: no such file or directory, and not a built-in set: give a Triton model repository (a directory), a description (a JSON file), %q or %q",
			name, BuiltinDemo, BuiltinExamples)
	case err != nil:
		return Repository{}, fmt.Errorf("model repository: %w", err)
	case fi.IsDir():
		return LoadRepositoryDir(name)
	}
	return LoadRepository(name)
}
