// Package refusaltest checks a subsystem's refusal table against the file that declares its
// kinds, so that a kind declared without its row fails the subsystem's tests.
package refusaltest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/refusal"
)

// EveryDeclaredKindHasARow fails t for each refusal kind declared in file (the subsystem's
// refusals.go) that table has no row of: an ErrType* string constant no row has as its Type, or
// an Err* sentinel made by errors.New whose message no row's sentinel has.
func EveryDeclaredKindHasARow(t testing.TB, table refusal.Table, file string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	var types, sentinels int
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Err") || i >= len(vs.Values) {
					continue
				}
				switch {
				case gd.Tok == token.CONST && strings.HasPrefix(name.Name, "ErrType"):
					types++
					typ := stringLit(t, vs.Values[i], name.Name)
					if _, ok := table.OfType(typ); !ok {
						t.Errorf("%s: %s (%q) has no row in the refusal table", file, name.Name, typ)
					}
				case gd.Tok == token.VAR:
					msg, ok := errorsNewMessage(vs.Values[i])
					if !ok {
						continue
					}
					sentinels++
					if !hasSentinel(table, msg) {
						t.Errorf("%s: %s (%q) has no row in the refusal table", file, name.Name, msg)
					}
				}
			}
		}
	}
	if types+sentinels == 0 {
		t.Fatalf("%s declares no refusal kind: is it the refusal table's file?", file)
	}
}

func stringLit(t testing.TB, e ast.Expr, name string) string {
	t.Helper()
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		t.Fatalf("%s is not a string literal", name)
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// errorsNewMessage is the message of errors.New("message"), the shape of a sentinel.
func errorsNewMessage(e ast.Expr) (string, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "New" {
		return "", false
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "errors" {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func hasSentinel(table refusal.Table, msg string) bool {
	for _, k := range table {
		if k.Sentinel != nil && k.Sentinel.Error() == msg {
			return true
		}
	}
	return false
}
