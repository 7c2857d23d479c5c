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
	"io/fs"
	"strings"
	"testing"
)

// Count returns the number of exported declarations and methods of the
// package in dir (its non-test files), and their names, "Type.Method" for
// a method.
func Count(dir string) (int, []string, error) {
	fset := token.NewFileSet()
	notTest := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, dir, notTest, parser.ParseComments)
	if err != nil {
		return 0, nil, err
	}
	if len(pkgs) != 1 {
		return 0, nil, fmt.Errorf("apicount: %s holds %d packages, want 1", dir, len(pkgs))
	}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
		}
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
