// Package yamldocs turns multi-document YAML (written inline, matched by a glob,
// or built by kustomize) into Kubernetes manifests keyed by object identity, and
// sorts them by scope. It is the logic behind k8sconnect_yaml_split and
// k8sconnect_yaml_scoped; it needs no cluster unless a scope is asked of one.
package yamldocs

import (
	"bytes"
	"strconv"
	"strings"
)

// Document is one YAML document of a source, as written.
type Document struct {
	// Source names where the document came from: a file path, "content", or
	// "kustomize build DIR". Errors quote it so users can find the document.
	Source string
	// Index is the 1-based position of the document in its source, counting
	// empty documents too, so it matches what a reader counts between `---` lines.
	Index int
	// Item is the 1-based position inside a `kind: List` document; 0 otherwise.
	Item int
	// Line is the 1-based line of the source where the document's text starts.
	Line int
	// Text is the document's YAML without its `---` separator, ending in one newline.
	Text string
}

// Where says where a document is, for error messages: "app.yaml document 3 (line 41)".
func (d Document) Where() string {
	s := d.Source + " document " + strconv.Itoa(d.Index)
	if d.Item > 0 {
		s += " item " + strconv.Itoa(d.Item)
	}
	if d.Line > 0 {
		s += " (line " + strconv.Itoa(d.Line) + ")"
	}
	return s
}

// SplitDocuments cuts a YAML stream at its `---` lines. It keeps every document,
// empty ones included, so indices and line numbers match the source; callers
// drop the empty ones with HasContent.
//
// A hand-written splitter rather than a YAML reader: it must report the line each
// document starts on (so a parse error can name a line of the file, not of the
// document), and scanning lines once keeps a 5 MB file cheap.
func SplitDocuments(source string, data []byte) []Document {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM some editors write
	var docs []Document
	start, startLine, line := 0, 1, 1
	flush := func(end int) {
		docs = append(docs, Document{Source: source, Index: len(docs) + 1, Line: startLine, Text: string(data[start:end])})
	}
	for pos := 0; pos < len(data); line++ {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end >= 0 {
			end += pos
			next = end + 1
		} else {
			end = len(data)
		}
		if isSeparator(data[pos:end]) {
			// A separator on the first line opens the first document rather than
			// closing an empty one, as in every YAML reader.
			if pos > 0 {
				flush(pos)
			}
			start, startLine = next, line+1
		}
		pos = next
	}
	if start < len(data) || len(docs) == 0 {
		flush(len(data))
	}
	for i := range docs {
		// Line must point at the first line of text that is kept.
		trimmed := trimLeadingBlankLines(docs[i].Text)
		docs[i].Line += strings.Count(docs[i].Text[:len(docs[i].Text)-len(trimmed)], "\n")
		docs[i].Text = normalize(trimmed)
	}
	return docs
}

// isSeparator reports whether a line is a document separator: `---` alone, or
// followed by a comment. `--- value` starts a document with inline content and is
// left to the parser, as Kubernetes' own YAML reader does.
func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := bytes.TrimSpace(line[3:])
	return len(rest) == 0 || rest[0] == '#'
}

// normalize trims blank lines at both ends, so moving a document to the end of a
// file (which often lacks a final newline) or adding blank lines around it does
// not change its text, and so not the plan of the object applied from it.
func normalize(s string) string {
	s = strings.TrimRight(trimLeadingBlankLines(s), " \t\r\n")
	if s == "" {
		return ""
	}
	return s + "\n"
}

func trimLeadingBlankLines(s string) string {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 || strings.TrimSpace(s[:i]) != "" {
			return s
		}
		s = s[i+1:]
	}
}

// HasContent reports whether a document holds anything but blank lines, comments
// and a `...` end marker: such documents are skipped, not reported.
func HasContent(text string) bool {
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if t != "" && t[0] != '#' && t != "..." {
			return true
		}
	}
	return false
}
