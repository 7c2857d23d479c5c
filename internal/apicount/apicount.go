// Package apicount counts the public surface of a package as
// scripts/apicount.sh does with `go doc -all`: every exported declaration
// and method (a const or var block counts once), so that a package's tests
// can hold it to its budget.
package apicount

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Count returns the number of exported declarations and methods of the
// package in dir (its non-test files), and their names, "Type.Method" for
// a method.
func Count(dir string) (int, []string, error) {
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return 0, nil, err
	}
	var files []*ast.File
	pkg := ""
	for _, path := range matches {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return 0, nil, err
		}
		if pkg != "" && f.Name.Name != pkg {
			return 0, nil, fmt.Errorf("apicount: %s holds packages %s and %s, want 1", dir, pkg, f.Name.Name)
		}
		pkg = f.Name.Name
		files = append(files, f)
	}
	if len(files) == 0 {
		return 0, nil, fmt.Errorf("apicount: %s holds no package", dir)
	}
	p, err := doc.NewFromFiles(fset, files, "example.com/"+dir)
	if err != nil {
		return 0, nil, err
	}
	var names []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			names = append(names, strings.Join(v.Names, ","))
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			names = append(names, prefix+f.Name)
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs("", p.Funcs)
	for _, t := range p.Types {
		names = append(names, t.Name)
		values(t.Consts)
		values(t.Vars)
		funcs("", t.Funcs)
		funcs(t.Name+".", t.Methods)
	}
	return len(names), names, nil
}

// Within fails t when the package in dir exports more than max
// declarations and methods, naming them.
func Within(t testing.TB, dir string, max int) {
	t.Helper()
	n, names, err := Count(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n > max {
		t.Errorf("%d exported declarations and methods, at most %d: %v", n, max, names)
	}
}
