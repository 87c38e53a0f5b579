package sdkgen

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The example programs mark the code that the Pulumi docs show with comment
// lines around it:
//
//	// docs:begin <region>      (# in Python and YAML)
//	...
//	// docs:end <region>
//
// The programs are run by the bridge tests (TestExamples and the scenario
// tests), so code shown in the docs is code that ran. A region's code is
// taken as it is, less the indentation all its lines share.
var regionMarker = regexp.MustCompile(`^\s*(?://|#)\s*docs:(begin|end)\s+([A-Za-z0-9-]+)\s*$`)

// exampleLanguages are the example directories (examples/pulumi-<dir>) by the
// language name a Pulumi docs code fence carries, in the order the docs list
// them.
var exampleLanguages = []struct{ fence, dir string }{
	{"typescript", "typescript"},
	{"python", "python"},
	{"go", "go"},
	{"yaml", "yaml"},
	{"java", "java"},
}

// regionFileExts are the program files searched for regions.
var regionFileExts = map[string]bool{".ts": true, ".py": true, ".go": true, ".java": true, ".yaml": true}

// Region is one marked piece of an example program.
type Region struct {
	Code string // the lines between the markers, less their common indentation
	File string // slash-separated, relative to the repository root
}

// Regions reads every marked region of the example programs under root,
// keyed by region name, then by code fence language. A region name is unique
// within a language; an unclosed or unopened region is an error.
func Regions(root string) (map[string]map[string]Region, error) {
	out := map[string]map[string]Region{}
	for _, lang := range exampleLanguages {
		base := filepath.Join(root, "examples", "pulumi-"+lang.dir)
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				// Installed dependencies and build output, not programs.
				switch d.Name() {
				case "node_modules", ".venv", "target", "bin", "__pycache__":
					return filepath.SkipDir
				}
				return nil
			}
			if !regionFileExts[filepath.Ext(p)] {
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			found, err := fileRegions(p)
			if err != nil {
				return fmt.Errorf("%s: %w", filepath.ToSlash(rel), err)
			}
			for name, code := range found {
				if prev, ok := out[name][lang.fence]; ok {
					return fmt.Errorf("region %q of %s is in both %s and %s", name, lang.fence, prev.File, filepath.ToSlash(rel))
				}
				if out[name] == nil {
					out[name] = map[string]Region{}
				}
				out[name][lang.fence] = Region{Code: code, File: filepath.ToSlash(rel)}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fileRegions reads the regions of one file.
func fileRegions(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	regions := map[string]string{}
	var open string // the region being read, or ""
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		m := regionMarker.FindStringSubmatch(line)
		switch {
		case m == nil:
			if open != "" {
				lines = append(lines, line)
			}
		case m[1] == "begin":
			if open != "" {
				return nil, fmt.Errorf("line %d: region %q begins inside region %q", n, m[2], open)
			}
			if _, ok := regions[m[2]]; ok {
				return nil, fmt.Errorf("line %d: region %q appears twice", n, m[2])
			}
			open, lines = m[2], nil
		default: // end
			if open != m[2] {
				return nil, fmt.Errorf("line %d: docs:end %s, but the open region is %q", n, m[2], open)
			}
			regions[open] = dedent(lines)
			open = ""
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if open != "" {
		return nil, fmt.Errorf("region %q has no docs:end", open)
	}
	return regions, nil
}

// dedent removes the indentation that every non-blank line shares. Where a
// line starts further left (a template literal's text in column 0), the code
// keeps its indentation: removing more would change the literal.
func dedent(lines []string) string {
	indent := ""
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lead := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first || !strings.HasPrefix(lead, indent) {
			if first {
				indent, first = lead, false
			} else {
				indent = commonPrefix(indent, lead)
			}
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimPrefix(l, indent)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}

func commonPrefix(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return a[:n]
}

// regionNames lists the region names in order.
func regionNames(r map[string]map[string]Region) []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
