package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/pgranger/pgranger/internal/testrepo"
)

// A citation names a document and one of its headings:
// docs/security.md, "The barrier" (also without the comma, or with the
// section in parentheses). A heading "A: B" may be cited as "A". A
// paragraph or list item that opens with a bold term is a section too:
// "**Writes (DML)** need …" may be cited as "Writes (DML)" or "Writes",
// up to a space or a comma.
var citation = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:\.\./)*(?:[A-Za-z0-9_-]+/)*[A-Za-z0-9_-]+\.md),?\s*\(?"([^"]{1,160})"`)

// A bold term opening a paragraph or a list item.
var leadIn = regexp.MustCompile(`^\s*(?:[*-]\s+)?\*\*([^*]+)\*\*`)

// A Markdown link to a file of the repository, with or without #anchor.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// docFile is what a Markdown file offers to citations and links.
type docFile struct {
	headings []string        // heading texts, as written
	leadIns  []string        // bold terms that open a paragraph or an item, without a final '.'
	anchors  map[string]bool // GitHub's anchors of those headings
}

// readDoc reads the headings of a Markdown file, outside fenced code.
func readDoc(path string) (*docFile, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &docFile{anchors: map[string]bool{}}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if m := leadIn.FindStringSubmatch(line); m != nil {
			d.leadIns = append(d.leadIns, strings.TrimRight(m[1], ".:"))
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimRight(strings.TrimLeft(line, "#"), "# "))
		d.headings = append(d.headings, h)
		slug := anchor(h)
		if n := seen[slug]; n > 0 {
			d.anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			d.anchors[slug] = true
		}
		seen[slug]++
	}
	return d, nil
}

// anchor is GitHub's anchor for a heading: lower case, spaces to
// hyphens, punctuation other than - and _ dropped.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// names reports whether the heading is the section cited.
func (d *docFile) names(section string) bool {
	return slices.ContainsFunc(d.headings, func(h string) bool {
		return h == section || strings.HasPrefix(h, section+":")
	}) || slices.ContainsFunc(d.leadIns, func(l string) bool {
		rest, ok := strings.CutPrefix(l, section)
		return ok && (rest == "" || rest[0] == ' ' || rest[0] == ',')
	})
}

// source is one file's text where citations may stand: a Go file's
// comments, another file's comment lines, a Markdown file outside
// fenced code; lines are joined, so a citation may wrap.
type source struct {
	path   string   // relative to the root
	chunks []string // comment groups or paragraphs
	lines  []int    // the first line of each chunk
}

var commentMarker = regexp.MustCompile(`^\s*(//|#|--|\*)?\s?`)

func readSource(root, rel string) (*source, error) {
	path := filepath.Join(root, rel)
	s := &source{path: rel}
	switch {
	case strings.HasSuffix(rel, ".go"):
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, g := range f.Comments {
			s.chunks = append(s.chunks, strings.ReplaceAll(g.Text(), "\n", " "))
			s.lines = append(s.lines, fset.Position(g.Pos()).Line)
		}
	default:
		text, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		md := strings.HasSuffix(rel, ".md")
		var cur []string
		start, fenced := 0, false
		flush := func() {
			if len(cur) > 0 {
				s.chunks = append(s.chunks, strings.Join(cur, " "))
				s.lines = append(s.lines, start)
			}
			cur = nil
		}
		for i, line := range strings.Split(string(text), "\n") {
			if md && strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				flush()
				continue
			}
			if md && fenced {
				continue
			}
			if !md {
				line = commentMarker.ReplaceAllString(line, "")
			}
			if strings.TrimSpace(line) == "" {
				flush()
				continue
			}
			if cur == nil {
				start = i + 1
			}
			cur = append(cur, strings.TrimSpace(line))
		}
		flush()
	}
	return s, nil
}

// cited reports whether a file of this kind is read for citations.
func cited(name string) bool {
	switch filepath.Ext(name) {
	case ".go", ".md", ".sh", ".toml", ".yml", ".yaml", ".sql":
		return true
	}
	return name == "Makefile" || name == "Dockerfile"
}

// TestDocCitations keeps the references to the documentation valid:
// every `docs/<file>.md, "<section>"` that a Go comment, a script, a
// configuration example or a document cites names an existing file and
// one of its headings, and every link between the Markdown files of the
// repository points to a file that exists and, with #anchor, to one of
// its headings. A renamed heading fails here until its citations follow.
func TestDocCitations(t *testing.T) {
	root := testrepo.Root(t)
	docs := map[string]*docFile{}
	doc := func(path string) *docFile {
		if d, ok := docs[path]; ok {
			return d
		}
		d, err := readDoc(path)
		if err != nil {
			d = nil
		}
		docs[path] = d
		return d
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if path != root && (strings.HasPrefix(e.Name(), ".") || e.Name() == "bin" || e.Name() == "target" || e.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if cited(e.Name()) {
			rel, _ := filepath.Rel(root, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rel := range files {
		s, err := readSource(root, rel)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		dir := filepath.Dir(filepath.Join(root, rel))
		md := strings.HasSuffix(rel, ".md")
		// A path in docs/ is the repository's; a Markdown file's other
		// paths are its own directory's.
		resolve := func(p string) string {
			if !md || strings.HasPrefix(p, "docs/") {
				return filepath.Join(root, p)
			}
			return filepath.Join(dir, p)
		}
		for i, chunk := range s.chunks {
			at := rel + ":" + strconv.Itoa(s.lines[i])
			for _, m := range citation.FindAllStringSubmatch(chunk, -1) {
				target, section := m[1], m[2]
				n++
				d := doc(resolve(target))
				switch {
				case d == nil:
					t.Errorf("%s: cites %s, %q: no such file", at, target, section)
				case !d.names(section):
					t.Errorf("%s: cites %s, %q: no such heading there", at, target, section)
				}
			}
			if !md {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(chunk, -1) {
				link := m[1]
				if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(link, "#")
				target := filepath.Join(root, rel)
				if file != "" {
					target = filepath.Join(dir, file)
				}
				n++
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: links to %s: no such file", at, link)
					continue
				}
				if frag == "" || !strings.HasSuffix(target, ".md") {
					continue
				}
				if d := doc(target); d == nil || !d.anchors[frag] {
					t.Errorf("%s: links to %s: no heading with that anchor", at, link)
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("found only %d citations and links; the scan is broken", n)
	}
	t.Logf("%d citations and links checked in %d files", n, len(files))
}
