// Package doctest finds the Terraform code in the registry docs and reads the
// marker that says whether a block runs as it stands. Its test applies every
// example under examples/ and every runnable block of docs/guides against the
// embedded cluster, under terraform or tofu (K8SCONNECT_ENGINE), so an example
// that no longer matches the schema, or a guide whose code does not do what
// the text says, fails CI instead of a user.
//
// A guide marks each HCL block with an HTML comment on the line before its
// fence (the registry renders nothing for it):
//
//	<!-- doctest: run -->                      a complete configuration: apply, re-plan, destroy
//	<!-- doctest: run setup=eks-aws-node -->   the same, after a named setup step the test performs
//	<!-- doctest: skip: needs an AWS account --> shown, not run; the reason is required
//
// A block with no marker is an error, so nothing is left untested by accident.
package doctest

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// HCLLanguages are the fence info strings that hold Terraform code.
var HCLLanguages = map[string]bool{"terraform": true, "hcl": true, "tf": true}

// Block is one fenced code block of a Markdown page.
type Block struct {
	File string // the page, as given to Blocks
	Line int    // the line of the opening fence, from 1
	Lang string // the fence's info string, first word
	Code string
	// Marker is the doctest comment before the fence; nil when there is none.
	Marker *Marker
}

// Where names the block in test output: "docs/guides/waiting.md:42".
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// IsHCL reports whether the block holds Terraform code.
func (b Block) IsHCL() bool { return HCLLanguages[b.Lang] }

// Marker is what a doctest comment says about the block after it.
type Marker struct {
	Run    bool
	Setups []string // named setup steps to perform first (Run only)
	Reason string   // why the block does not run (not Run)
}

var markerLine = regexp.MustCompile(`^<!--\s*doctest:\s*(.*?)\s*-->$`)

// ParseMarker reads the text between "doctest:" and "-->".
func ParseMarker(s string) (*Marker, error) {
	switch {
	case s == "run":
		return &Marker{Run: true}, nil
	case strings.HasPrefix(s, "run "):
		m := &Marker{Run: true}
		for _, f := range strings.Fields(strings.TrimPrefix(s, "run ")) {
			names, ok := strings.CutPrefix(f, "setup=")
			if !ok || names == "" {
				return nil, fmt.Errorf("doctest marker %q: after run, only setup=<name>[,<name>...] is understood", s)
			}
			m.Setups = append(m.Setups, strings.Split(names, ",")...)
		}
		return m, nil
	case strings.HasPrefix(s, "skip:"):
		reason := strings.TrimSpace(strings.TrimPrefix(s, "skip:"))
		if reason == "" {
			return nil, fmt.Errorf("doctest marker %q: a skipped block must say why (skip: <reason>)", s)
		}
		return &Marker{Reason: reason}, nil
	}
	return nil, fmt.Errorf("doctest marker %q: want \"run\", \"run setup=<name>\" or \"skip: <reason>\"", s)
}

// Blocks returns every fenced code block of a Markdown page, with the doctest
// marker on the last non-blank line before its fence. A fence without an info
// string is an error: it could hide Terraform code from the test.
func Blocks(file string, markdown []byte) ([]Block, error) {
	var (
		out      []Block
		open     *Block
		fence    string
		indent   string
		body     strings.Builder
		previous string // the last non-blank line outside a block
		lineNo   int
	)
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if open != nil {
			if t := strings.TrimSpace(line); len(t) >= len(fence) && strings.Trim(t, fence[:1]) == "" {
				open.Code = body.String()
				out = append(out, *open)
				open, previous = nil, ""
				continue
			}
			body.WriteString(strings.TrimPrefix(line, indent) + "\n")
			continue
		}
		trimmed := strings.TrimLeft(line, " ")
		if f := fenceOf(trimmed); f != "" {
			info := strings.TrimSpace(strings.TrimLeft(trimmed, f[:1]))
			lang, _, _ := strings.Cut(info, " ")
			if lang == "" {
				return nil, fmt.Errorf("%s:%d: a code fence without a language; give it one (```terraform, ```text or ```shell)", file, lineNo)
			}
			open = &Block{File: file, Line: lineNo, Lang: lang}
			fence, indent = f, line[:len(line)-len(trimmed)]
			body.Reset()
			if m := markerLine.FindStringSubmatch(strings.TrimSpace(previous)); m != nil {
				marker, err := ParseMarker(m[1])
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %w", file, lineNo, err)
				}
				open.Marker = marker
			}
			continue
		}
		if strings.TrimSpace(line) != "" {
			previous = line
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if open != nil {
		return nil, fmt.Errorf("%s:%d: code fence never closed", file, open.Line)
	}
	return out, nil
}

// fenceOf is the opening fence at the start of line (``` or ~~~, three or
// more), or "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// Check applies the rules every page with Terraform code follows: each HCL
// block is marked, and each marker sits on an HCL block. setups are the names
// a run marker may use.
func Check(blocks []Block, setups map[string]bool) error {
	var errs []string
	for _, b := range blocks {
		switch {
		case b.IsHCL() && b.Marker == nil:
			errs = append(errs, b.Where()+": an HCL block without a doctest marker; put <!-- doctest: run --> or "+
				"<!-- doctest: skip: <reason> --> on the line before its fence")
		case !b.IsHCL() && b.Marker != nil:
			errs = append(errs, fmt.Sprintf("%s: a doctest marker on a %q block; only terraform, hcl and tf blocks run", b.Where(), b.Lang))
		case b.Marker != nil:
			for _, s := range b.Marker.Setups {
				if !setups[s] {
					errs = append(errs, fmt.Sprintf("%s: unknown setup %q", b.Where(), s))
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}
