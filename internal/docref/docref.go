// Package docref checks the references the repository's documents make
// to the repository: Go symbols (memory.Store.Extract), test and benchmark
// names, file paths and links, make targets, and the flags of the
// commands they show (go run ./eval -live). A document that names
// something the code no longer has misleads its reader; the test of this
// package fails on every such dangling reference, and on a document
// named that the repository does not hold (a design kept elsewhere).
package docref

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Dangling is one reference a document makes to something the repository
// does not have.
type Dangling struct {
	Doc  string // the document, relative to the root
	Line int
	Kind string // "symbol", "test", "path", "link", "make", "flag"
	Ref  string
}

func (d Dangling) String() string {
	return fmt.Sprintf("%s:%d: %s %s", d.Doc, d.Line, d.Kind, d.Ref)
}

// Repo is what the documents may refer to, read from a repository.
type Repo struct {
	root string
	// symbols maps a package name to its declared names: functions,
	// types, variables and constants, and Type.Method and Type.Field
	// (a method alone is not a package-level name).
	symbols map[string]map[string]bool
	// tests are the Test, Benchmark, Fuzz and Example functions.
	tests map[string]bool
	// strings maps a package folder (relative, slash-separated) to the
	// string literals of its Go files, where its flags are named.
	strings map[string]map[string]bool
	// aliases maps pkg.Alias to the pkg.Type it stands for.
	aliases map[string]string
	// dirs maps a package folder to its package name.
	dirs map[string]string
	// targets are the Makefile's targets.
	targets map[string]bool
	// notPaths are values that look like paths and are not: the OAuth
	// scopes.
	notPaths map[string]bool
	// docNames are the base names of the repository's Markdown files, which
	// a document may name without their folder (README.md).
	docNames map[string]bool
}

// Read reads the Go files and the Makefile of the repository at root.
// notPaths are values shaped like paths that name something else (such
// as an OAuth scope "memory/user").
func Read(root string, notPaths ...string) (*Repo, error) {
	r := &Repo{root: root, symbols: map[string]map[string]bool{}, tests: map[string]bool{},
		strings: map[string]map[string]bool{}, dirs: map[string]string{}, aliases: map[string]string{}, targets: map[string]bool{}, notPaths: map[string]bool{}, docNames: map[string]bool{}}
	for _, p := range notPaths {
		r.notPaths[p] = true
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			r.docNames[d.Name()] = true
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("docref: %w", err)
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		r.addFile(filepath.ToSlash(rel), f, strings.HasSuffix(path, "_test.go"))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, r.readMakefile()
}

// addFile records the declarations of f, a file of the package in dir.
func (r *Repo) addFile(dir string, f *ast.File, test bool) {
	syms := r.symbols[f.Name.Name]
	if syms == nil {
		syms = map[string]bool{}
		r.symbols[f.Name.Name] = syms
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			// A method is its type's (Store.Extract), never the
			// package's: memory.Extract names nothing.
			if d.Recv != nil && len(d.Recv.List) == 1 {
				syms[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
			} else if d.Recv == nil {
				syms[d.Name.Name] = true
			}
			if test && regexp.MustCompile(`^(Test|Benchmark|Fuzz|Example)`).MatchString(d.Name.Name) {
				r.tests[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					syms[s.Name.Name] = true
					addFields(syms, s)
					if sel, ok := s.Type.(*ast.SelectorExpr); ok && s.Assign.IsValid() {
						if x, ok := sel.X.(*ast.Ident); ok {
							r.aliases[f.Name.Name+"."+s.Name.Name] = x.Name + "." + sel.Sel.Name
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						syms[n.Name] = true
					}
				}
			}
		}
	}
	if test {
		return
	}
	r.dirs[dir] = f.Name.Name
	lits := r.strings[dir]
	if lits == nil {
		lits = map[string]bool{}
		r.strings[dir] = lits
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
			if s, err := strconv.Unquote(b.Value); err == nil {
				lits[s] = true
			}
		}
		return true
	})
}

// addFields records Type.Field for the fields of a struct type and
// Type.Method for the methods of an interface.
func addFields(syms map[string]bool, s *ast.TypeSpec) {
	var list *ast.FieldList
	switch t := s.Type.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list = t.Methods
	}
	if list == nil {
		return
	}
	for _, f := range list.List {
		for _, n := range f.Names {
			syms[s.Name.Name+"."+n.Name] = true
		}
		if len(f.Names) == 0 { // embedded: its name
			syms[s.Name.Name+"."+recvName(f.Type)] = true
		}
	}
}

// recvName returns the type name of a receiver or embedded field.
func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// readMakefile records the Makefile's targets.
func (r *Repo) readMakefile() error {
	f, err := os.Open(filepath.Join(r.root, "Makefile"))
	if err != nil {
		return err
	}
	defer f.Close()
	target := regexp.MustCompile(`^([A-Za-z0-9_.-]+)\s*:([^=]|$)`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := target.FindStringSubmatch(sc.Text()); m != nil {
			r.targets[m[1]] = true
		}
	}
	return sc.Err()
}

var (
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	symbolRef = regexp.MustCompile(`(?:^|[^\w./-])([a-z][a-z0-9]*)\.([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?`)
	testRef   = regexp.MustCompile(`\b((?:Test|Benchmark|Fuzz)[A-Z_]\w*)`)
	// docName is a document named by its file name alone, as in
	// BENCHMARKS.md, in prose or code.
	docName    = regexp.MustCompile(`\b[A-Z][A-Z0-9_-]*\.md\b`)
	makeRef    = regexp.MustCompile(`(?:^|[\s;&(])make\s+([a-z][a-z0-9-]*)`)
	goRunRef   = regexp.MustCompile(`go run (\./[A-Za-z0-9_/.-]*)((?:\s+[^\s|;&]+)*)`)
	flagToken  = regexp.MustCompile(`^--?([a-z][a-z0-9-]*)(=.*)?$`)
	pathToken  = regexp.MustCompile(`^\.?/?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*/?$`)
	fileSuffix = regexp.MustCompile(`\.(go|md|yaml|yml|json|ts|js|txt|toml|html|css|svg|png|sh|mod|sum|log)$`)
	// placeholder is a word in capitals that stands for any name, as in
	// functions/NAME.
	placeholder = regexp.MustCompile(`(^|/)[A-Z][A-Z_]+(/|$)`)
	// pkgSymbol is a symbol named by its package's folder, as in
	// internal/motoserver.Find.
	pkgSymbol = regexp.MustCompile(`^\.?/?((?:[A-Za-z0-9_-]+/)*[A-Za-z0-9_-]+)\.([A-Z]\w*)$`)
)

// Check returns the dangling references of the Markdown document doc
// (relative to the root).
func (r *Repo) Check(doc string) ([]Dangling, error) {
	b, err := os.ReadFile(filepath.Join(r.root, doc))
	if err != nil {
		return nil, err
	}
	var out []Dangling
	fence := false
	for i, line := range strings.Split(string(b), "\n") {
		add := func(kind, ref string) { out = append(out, Dangling{doc, i + 1, kind, ref}) }
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		spans := []string{}
		if fence {
			spans = append(spans, line)
		} else {
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				spans = append(spans, m[1])
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				if ref := m[1]; !strings.Contains(ref, "://") && !strings.HasPrefix(ref, "#") && !strings.HasPrefix(ref, "mailto:") {
					if !r.exists(filepath.Join(filepath.Dir(doc), strings.SplitN(ref, "#", 2)[0])) {
						add("link", ref)
					}
				}
			}
		}
		for _, m := range testRef.FindAllStringSubmatch(line, -1) {
			if !r.hasTest(m[1]) {
				add("test", m[1])
			}
		}
		for _, name := range docName.FindAllString(line, -1) {
			if !r.docNames[name] {
				add("path", name) // A document outside the repository, such as a design.
			}
		}
		for _, s := range spans {
			r.checkSpan(s, fence, add)
		}
	}
	return out, nil
}

// checkSpan checks the symbols, paths, make targets and flags of one code
// span or fenced line.
func (r *Repo) checkSpan(s string, fenced bool, add func(kind, ref string)) {
	for _, m := range symbolRef.FindAllStringSubmatch(s, -1) {
		pkg, name, member := m[1], m[2], m[3]
		if to, ok := r.aliases[pkg+"."+name]; ok && member != "" {
			pkg, name, _ = strings.Cut(to, ".")
		}
		syms, ok := r.symbols[pkg]
		if !ok || fileSuffix.MatchString("."+name) || pkg == "main" {
			continue
		}
		switch {
		case member != "" && syms[name+"."+member]:
		case member != "" && syms[name] && !syms[name+"."+member] && !isUpper(member):
			// pkg.Func.x: a call's result or a field of a value; not checked.
		case member == "" && syms[name]:
		default:
			if member != "" && !syms[name] {
				add("symbol", pkg+"."+name)
			} else if member != "" {
				add("symbol", pkg+"."+name+"."+member)
			} else {
				add("symbol", pkg+"."+name)
			}
		}
	}
	for _, m := range makeRef.FindAllStringSubmatch(s, -1) {
		if !r.targets[m[1]] {
			add("make", m[1])
		}
	}
	for _, m := range goRunRef.FindAllStringSubmatch(s, -1) {
		dir := strings.TrimSuffix(strings.TrimPrefix(m[1], "./"), "/")
		lits, ok := r.strings[dir]
		if !ok {
			add("path", m[1])
			continue
		}
		for _, tok := range strings.Fields(m[2]) {
			if f := flagToken.FindStringSubmatch(tok); f != nil && !lits[f[1]] && f[1] != "h" && f[1] != "help" {
				add("flag", "go run "+m[1]+" -"+f[1])
			}
		}
	}
	if fenced {
		return
	}
	for _, tok := range strings.Fields(s) {
		if m := pkgSymbol.FindStringSubmatch(strings.TrimRight(tok, ",;:)")); m != nil && strings.Contains(m[1], "/") && r.exists(strings.SplitN(m[1], "/", 2)[0]) {
			if pkg, ok := r.dirs[m[1]]; !ok || !r.symbols[pkg][m[2]] {
				add("symbol", m[1]+"."+m[2])
			}
			continue
		}
		if r.isPathRef(tok) && !r.exists(tok) {
			add("path", tok)
		}
	}
}

// isPathRef reports whether tok, a word of a code span, names a file or
// folder of the repository: shaped like a path, and either with a file's
// suffix or under a top-level folder of the repository.
func (r *Repo) isPathRef(tok string) bool {
	tok = strings.TrimRight(tok, ",;:.)")
	if r.notPaths[tok] || strings.HasPrefix(tok, "/") || placeholder.MatchString(tok) || !pathToken.MatchString(tok) || !strings.Contains(strings.Trim(tok, "./"), "/") && !fileSuffix.MatchString(tok) {
		return false
	}
	return r.exists(strings.SplitN(strings.TrimPrefix(tok, "./"), "/", 2)[0])
}

// hasTest reports whether a test is named name or, as a -run pattern
// matches, begins with it.
func (r *Repo) hasTest(name string) bool {
	if r.tests[name] {
		return true
	}
	for t := range r.tests {
		if strings.HasPrefix(t, name) {
			return true
		}
	}
	return false
}

// exists reports whether path (relative to the root) is in the repository.
func (r *Repo) exists(path string) bool {
	path = strings.TrimRight(path, ",;:.)")
	_, err := os.Stat(filepath.Join(r.root, strings.TrimPrefix(path, "./")))
	return err == nil
}

func isUpper(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }
