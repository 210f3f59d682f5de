package httpapi

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// codePackages are the directories, from the module's root, whose Code*
// constants are the service's error codes.
var codePackages = []string{"memory", "functions/httpapi"}

// errorsDoc is the document that lists every error code.
const errorsDoc = "docs/errors.md"

// TestErrorsDocMatchesCode holds docs/errors.md's table to the code: every
// Code* constant of codePackages is a row with its number and every row a
// constant, no two constants or rows share a number, and the status of a
// row is the HTTP status every memory.Error built with that code carries
// (read from the source of the whole module: Error literals, and calls of
// helpers such as fail and badRequest that build one from their
// arguments). A status of "—" means the code is only reported, never
// returned: no Error with it is built in a return statement.
func TestErrorsDocMatchesCode(t *testing.T) {
	// go test runs a package's tests in its directory, two below the
	// module's root.
	root := filepath.Join("..", "..")
	a := newErrorScan(t, root)
	for _, dir := range codePackages {
		a.readCodes(filepath.Join(root, dir))
	}
	if len(a.codes) == 0 {
		t.Fatalf("no Code* constant found in %v", codePackages)
	}
	a.readUses(root)
	rows := readErrorsDoc(t, filepath.Join(root, errorsDoc))

	byValue := map[int64][]string{}
	for name, c := range a.codes {
		byValue[c.value] = append(byValue[c.value], name)
	}
	for v, names := range byValue {
		if len(names) > 1 {
			slices.Sort(names)
			t.Errorf("constants %s share the code %d", strings.Join(names, ", "), v)
		}
	}
	docByValue := map[int64]string{}
	for name, r := range rows {
		if other, ok := docByValue[r.code]; ok {
			t.Errorf("%s: rows %s and %s share the code %d", errorsDoc, other, name, r.code)
		}
		docByValue[r.code] = name
		c, ok := a.codes[name]
		switch {
		case !ok:
			t.Errorf("%s lists %s (%d), which is not a constant of %v", errorsDoc, name, r.code, codePackages)
		case c.value != r.code:
			t.Errorf("%s lists %s as %d; the code says %d (%s)", errorsDoc, name, r.code, c.value, c.pos)
		}
	}
	for _, name := range sortedKeys(a.codes) {
		c := a.codes[name]
		r, ok := rows[name]
		if !ok {
			t.Errorf("%s (%d, %s) is missing from %s", name, c.value, c.pos, errorsDoc)
			continue
		}
		var statuses []int
		returned := []string{}
		for _, u := range c.uses {
			if !slices.Contains(statuses, u.status) {
				statuses = append(statuses, u.status)
			}
			if u.returned {
				returned = append(returned, u.pos)
			}
		}
		slices.Sort(statuses)
		switch {
		case len(c.uses) == 0:
			t.Errorf("%s: no memory.Error is built with it anywhere, so its status cannot be checked", name)
		case r.status == 0 && len(returned) > 0:
			t.Errorf("%s says %s is only reported (status —), but an error with it is returned at %s", errorsDoc, name, strings.Join(returned, ", "))
		case r.status != 0 && !slices.Equal(statuses, []int{r.status}):
			t.Errorf("%s says %s has status %d; the code builds it with %v (%s)", errorsDoc, name, r.status, statuses, c.usePositions())
		}
	}
	if len(rows) > 0 && !t.Failed() {
		t.Logf("%d codes checked against %s", len(rows), errorsDoc)
	}
}

// docRow is one row of the errors document's table.
type docRow struct {
	code   int64
	status int // 0 for "—": reported, never an HTTP answer.
}

// docRowRE matches a table row: | code | status | pkg.Constant | meaning |.
var docRowRE = regexp.MustCompile(`^\|\s*(\d+)\s*\|\s*([^|]*?)\s*\|\s*` + "`?" + `([A-Za-z0-9_]+\.Code[A-Za-z0-9_]*)` + "`?" + `\s*\|`)

// readErrorsDoc returns the rows of the document's table by constant name.
func readErrorsDoc(t *testing.T, path string) map[string]docRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]docRow{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		m := docRowRE.FindStringSubmatch(sc.Text())
		if m == nil {
			if strings.HasPrefix(sc.Text(), "| 5") {
				t.Errorf("%s:%d: a row that is not | code | status | pkg.Constant | meaning |: %s", errorsDoc, line, sc.Text())
			}
			continue
		}
		code, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatalf("%s:%d: code %q: %v", errorsDoc, line, m[1], err)
		}
		r := docRow{code: code}
		if m[2] != "—" && m[2] != "-" {
			if r.status, err = strconv.Atoi(m[2]); err != nil {
				t.Errorf("%s:%d: status %q is neither a number nor —", errorsDoc, line, m[2])
			}
		}
		if _, dup := rows[m[3]]; dup {
			t.Errorf("%s:%d: %s is listed twice", errorsDoc, line, m[3])
		}
		rows[m[3]] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no table row of codes", errorsDoc)
	}
	return rows
}

// errorScan reads error codes and the errors built with them from source.
type errorScan struct {
	t     *testing.T
	root  string
	fset  *token.FileSet
	http  *types.Package
	codes map[string]*codeConst // by "pkg.Name", pkg being the package's name
}

// codeConst is one Code* constant and the errors built with it.
type codeConst struct {
	value int64
	pos   string
	uses  []codeUse
}

// codeUse is one memory.Error built with a code.
type codeUse struct {
	status   int
	returned bool // built in a return statement, directly or through a helper call
	pos      string
}

func (c *codeConst) usePositions() string {
	var ps []string
	for _, u := range c.uses {
		ps = append(ps, fmt.Sprintf("%d at %s", u.status, u.pos))
	}
	return strings.Join(ps, "; ")
}

func newErrorScan(t *testing.T, root string) *errorScan {
	t.Helper()
	http, err := importer.Default().Import("net/http")
	if err != nil {
		t.Fatalf("import net/http for its status constants: %v", err)
	}
	return &errorScan{t: t, root: root, fset: token.NewFileSet(), http: http, codes: map[string]*codeConst{}}
}

// parseDir returns the parsed non-test Go files of dir.
func (a *errorScan) parseDir(dir string) []*ast.File {
	a.t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		a.t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(a.fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			a.t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// readCodes records the constants named Code* of the package in dir. A
// value must be a constant expression of literals and the package's
// other constants.
func (a *errorScan) readCodes(dir string) {
	a.t.Helper()
	files := a.parseDir(dir)
	if len(files) == 0 {
		a.t.Fatalf("no Go file in %s", dir)
	}
	consts := map[string]ast.Expr{}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						consts[n.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	pkg := files[0].Name.Name
	var eval func(e ast.Expr, depth int) (constant.Value, error)
	eval = func(e ast.Expr, depth int) (constant.Value, error) {
		if depth > 20 {
			return nil, fmt.Errorf("constant defined in a loop")
		}
		switch e := e.(type) {
		case *ast.BasicLit:
			return constant.MakeFromLiteral(e.Value, e.Kind, 0), nil
		case *ast.ParenExpr:
			return eval(e.X, depth+1)
		case *ast.Ident:
			if v, ok := consts[e.Name]; ok {
				return eval(v, depth+1)
			}
		case *ast.BinaryExpr:
			x, err := eval(e.X, depth+1)
			if err != nil {
				return nil, err
			}
			y, err := eval(e.Y, depth+1)
			if err != nil {
				return nil, err
			}
			return constant.BinaryOp(x, e.Op, y), nil
		}
		return nil, fmt.Errorf("cannot evaluate %T", e)
	}
	for name, expr := range consts {
		if !isCodeName(name) {
			continue
		}
		v, err := eval(expr, 0)
		pos := a.position(expr.Pos())
		if err != nil {
			a.t.Errorf("%s.%s (%s): %v; write codes as literals", pkg, name, pos, err)
			continue
		}
		n, exact := constant.Int64Val(constant.ToInt(v))
		if !exact {
			a.t.Errorf("%s.%s (%s) is not an integer", pkg, name, pos)
			continue
		}
		a.codes[pkg+"."+name] = &codeConst{value: n, pos: pos}
	}
}

func isCodeName(name string) bool {
	return len(name) > 4 && strings.HasPrefix(name, "Code") && name[4] >= 'A' && name[4] <= 'Z'
}

// position returns p as a path relative to the module's root and a line.
func (a *errorScan) position(p token.Pos) string {
	pos := a.fset.Position(p)
	if rel, err := filepath.Rel(a.root, pos.Filename); err == nil {
		pos.Filename = filepath.ToSlash(rel)
	}
	return fmt.Sprintf("%s:%d", pos.Filename, pos.Line)
}

// helper is a function that builds a memory.Error from its arguments:
// status and code are either fixed or the index of a parameter.
type helper struct {
	status, statusParam int
	code                string
	codeParam           int
}

// readUses records every memory.Error built with a code in the module's
// non-test sources: Error literals with constant Status and Code, and
// calls of functions whose literal takes them from parameters.
func (a *errorScan) readUses(root string) {
	a.t.Helper()
	byPkg := map[string][]*ast.File{} // by directory
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dir := filepath.Dir(path)
			if _, done := byPkg[dir]; !done {
				byPkg[dir] = a.parseDir(dir)
			}
		}
		return nil
	})
	if err != nil {
		a.t.Fatal(err)
	}
	// First the helpers of every package, then the uses.
	helpers := map[string]helper{}           // by "pkg.func"
	inHelper := map[*ast.CompositeLit]bool{} // counted at the helper's calls
	for _, files := range byPkg {
		for _, f := range files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil || fn.Recv != nil {
					continue
				}
				params := paramIndex(fn.Type)
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					lit, ok := n.(*ast.CompositeLit)
					if !ok || !isErrorType(f, lit.Type) {
						return true
					}
					statusExpr, codeExpr := errorFields(lit)
					h := helper{statusParam: -1, codeParam: -1}
					if id, ok := statusExpr.(*ast.Ident); ok {
						if i, ok := params[id.Name]; ok {
							h.statusParam = i
						}
					}
					if id, ok := codeExpr.(*ast.Ident); ok {
						if i, ok := params[id.Name]; ok {
							h.codeParam = i
						}
					}
					if h.statusParam < 0 && h.codeParam < 0 {
						return true
					}
					if h.statusParam < 0 {
						h.status = a.status(f, statusExpr, lit)
					}
					if h.codeParam < 0 {
						h.code = a.code(f, codeExpr, lit)
					}
					helpers[f.Name.Name+"."+fn.Name.Name] = h
					inHelper[lit] = true
					return true
				})
			}
		}
	}
	for _, files := range byPkg {
		for _, f := range files {
			var returns []*ast.ReturnStmt
			ast.Inspect(f, func(n ast.Node) bool {
				if r, ok := n.(*ast.ReturnStmt); ok {
					returns = append(returns, r)
				}
				return true
			})
			inReturn := func(n ast.Node) bool {
				for _, r := range returns {
					for _, e := range r.Results {
						if e.Pos() <= n.Pos() && n.End() <= e.End() {
							return true
						}
					}
				}
				return false
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					if isErrorType(f, n.Type) && !inHelper[n] {
						s, c := errorFields(n)
						a.use(a.code(f, c, n), a.status(f, s, n), inReturn(n), n)
					}
				case *ast.CallExpr:
					h, ok := helpers[calleeName(f, n.Fun)]
					if !ok {
						return true
					}
					status, code := h.status, h.code
					if h.statusParam >= 0 {
						status = a.status(f, arg(n, h.statusParam), n)
					}
					if h.codeParam >= 0 {
						code = a.code(f, arg(n, h.codeParam), n)
					}
					a.use(code, status, inReturn(n), n)
				}
				return true
			})
		}
	}
}

func (a *errorScan) use(code string, status int, returned bool, at ast.Node) {
	if code == "" || status == 0 {
		return // Reported by a.code or a.status.
	}
	c, ok := a.codes[code]
	if !ok {
		a.t.Errorf("%s: a memory.Error is built with %s, which is not a Code* constant of %v", a.position(at.Pos()), code, codePackages)
		return
	}
	c.uses = append(c.uses, codeUse{status: status, returned: returned, pos: a.position(at.Pos())})
}

// code returns the "pkg.Name" of a code expression: CodeX in its own
// package or pkg.CodeX; it reports anything else.
func (a *errorScan) code(f *ast.File, e ast.Expr, at ast.Node) string {
	switch e := e.(type) {
	case *ast.Ident:
		if isCodeName(e.Name) {
			return f.Name.Name + "." + e.Name
		}
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && isCodeName(e.Sel.Name) {
			return importedName(f, x.Name) + "." + e.Sel.Name
		}
	}
	a.t.Errorf("%s: a memory.Error is built with a code that is not a Code* constant (%s); this test cannot check its status", a.position(at.Pos()), exprString(e))
	return ""
}

// status returns the value of a status expression: http.StatusX or an
// integer literal; it reports anything else.
func (a *errorScan) status(f *ast.File, e ast.Expr, at ast.Node) int {
	switch e := e.(type) {
	case *ast.BasicLit:
		if n, err := strconv.Atoi(e.Value); err == nil {
			return n
		}
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && importedPath(f, x.Name) == "net/http" {
			if c, ok := a.http.Scope().Lookup(e.Sel.Name).(*types.Const); ok {
				if n, ok := constant.Int64Val(c.Val()); ok {
					return int(n)
				}
			}
		}
	}
	a.t.Errorf("%s: a memory.Error is built with a status that is neither http.StatusX nor a number (%s); this test cannot check it", a.position(at.Pos()), exprString(e))
	return 0
}

// isErrorType reports whether e names memory.Error: Error in package
// memory, or memory.Error elsewhere.
func isErrorType(f *ast.File, e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return f.Name.Name == "memory" && e.Name == "Error"
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && e.Sel.Name == "Error" && strings.HasSuffix(importedPath(f, x.Name), "/memory")
	}
	return false
}

// errorFields returns the Status and Code of an Error literal (nil when
// absent).
func errorFields(lit *ast.CompositeLit) (status, code ast.Expr) {
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		switch k, _ := kv.Key.(*ast.Ident); {
		case k == nil:
		case k.Name == "Status":
			status = kv.Value
		case k.Name == "Code":
			code = kv.Value
		}
	}
	return status, code
}

// paramIndex returns the position of every named parameter of ft.
func paramIndex(ft *ast.FuncType) map[string]int {
	out := map[string]int{}
	i := 0
	for _, field := range ft.Params.List {
		if len(field.Names) == 0 {
			i++
			continue
		}
		for _, n := range field.Names {
			out[n.Name] = i
			i++
		}
	}
	return out
}

// calleeName returns "pkg.func" for a call of func in f's own package or
// of pkg.func; "" otherwise.
func calleeName(f *ast.File, fun ast.Expr) string {
	switch fun := fun.(type) {
	case *ast.Ident:
		return f.Name.Name + "." + fun.Name
	case *ast.SelectorExpr:
		if x, ok := fun.X.(*ast.Ident); ok && importedPath(f, x.Name) != "" {
			return importedName(f, x.Name) + "." + fun.Sel.Name
		}
	}
	return ""
}

func arg(call *ast.CallExpr, i int) ast.Expr {
	if i < len(call.Args) {
		return call.Args[i]
	}
	return nil
}

// importedPath returns the import path that name refers to in f, or "".
func importedPath(f *ast.File, name string) string {
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if im.Name != nil && im.Name.Name == name {
			return p
		}
		if im.Name == nil && p[strings.LastIndex(p, "/")+1:] == name {
			return p
		}
	}
	return ""
}

// importedName returns the package name (the last element of its path) of
// the import that name refers to in f.
func importedName(f *ast.File, name string) string {
	p := importedPath(f, name)
	if p == "" {
		return name
	}
	return p[strings.LastIndex(p, "/")+1:]
}

func exprString(e ast.Expr) string {
	if e == nil {
		return "none"
	}
	return types.ExprString(e)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
