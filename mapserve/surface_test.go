package mapserve_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// The package is what a game needs to serve its map and no more: the
// server and its options, the hook for where its entities stand, and
// nothing the module's own command alone uses (NewMulti serves several
// saves, as a game with save slots does). go doc -all shows at most
// 11 declarations and methods (a const or var block counts once, as
// scripts/apicount.sh counts them).
func TestPublicSurface(t *testing.T) {
	fset := token.NewFileSet()
	names, err := os.ReadDir(".")
	must(t, err)
	var files []*ast.File
	for _, n := range names {
		if !strings.HasSuffix(n.Name(), ".go") || strings.HasSuffix(n.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n.Name(), nil, parser.ParseComments)
		must(t, err)
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/arksave/arksave/mapserve")
	must(t, err)
	var decls []string
	for _, v := range slices.Concat(p.Consts, p.Vars) {
		decls = append(decls, strings.Join(v.Names, ","))
	}
	for _, f := range p.Funcs {
		decls = append(decls, f.Name)
	}
	for _, ty := range p.Types {
		decls = append(decls, ty.Name)
		for _, v := range slices.Concat(ty.Consts, ty.Vars) {
			decls = append(decls, strings.Join(v.Names, ","))
		}
		for _, f := range slices.Concat(ty.Funcs, ty.Methods) {
			decls = append(decls, ty.Name+"."+f.Name)
		}
	}
	expect(t, len(decls) <= 11, "%d public declarations and methods, at most 11: %q", len(decls), decls)
	for _, need := range []string{"New", "Options", "Server", "Server.ServeHTTP", "Server.Close"} {
		expect(t, slices.Contains(decls, need) || slices.Contains(decls, "Server."+need), "no %s: %q", need, decls)
	}
}
