package doctest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// readmeMaxLines bounds the README. It is the front page: what k8sconnect
// is, how to start, where things are. Figures, dates and the reasons behind
// them belong on the pages in docs/ it links to, which is where a reader who
// wants them looks, and where they are kept up to date.
const readmeMaxLines = 300

// Without a cluster: the README stays under readmeMaxLines lines.
func TestReadmeStaysShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		lines++
	}
	if lines >= readmeMaxLines {
		t.Errorf("README.md has %d lines; keep it under %d: move figures and details to a page in docs/ and link to it",
			lines, readmeMaxLines)
	}
}
