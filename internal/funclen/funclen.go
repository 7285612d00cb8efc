// Package funclen measures the functions of Go source: how many lines
// each spans, from its func keyword to its closing brace. A test of it
// keeps every function of cmd/ short, so the command stays parsing, help
// and exit codes, and the work lives in the packages it calls.
package funclen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
)

// Func is one function and its length in lines.
type Func struct {
	File  string // path as walked
	Name  string // Name, or (Recv).Name for a method
	Lines int
}

func (f Func) String() string { return fmt.Sprintf("%s: %s is %d lines", f.File, f.Name, f.Lines) }

// Over returns every function with a body in the non-test Go files under
// root (every directory below it) that spans more than max lines.
func Over(root string, max int) ([]Func, error) {
	var out []Func
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		af, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", path, err)
		}
		for _, decl := range af.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if n > max {
				out = append(out, Func{File: path, Name: funcName(fd), Lines: n})
			}
		}
		return nil
	})
	return out, err
}

// funcName is fd's name, with its receiver's type for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fd.Name.Name
	}
	return fd.Name.Name
}
