package helmchart

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// Digest identifies what a loaded chart is, whatever it was loaded from: a
// local directory edited in place, an archive republished under the same
// version, a dependency updated. It covers everything that decides what a
// revision renders or runs (Chart.yaml and Chart.lock, values.yaml and its
// schema, every template, hooks and NOTES.txt among them, every other file,
// crds/ among them, and each dependency's own digest) and nothing that does
// not (modification times, the order files were read in). Two loads of the
// same chart give the same digest; a changed byte in any of those gives
// another.
func Digest(c *chart.Chart) string {
	h := sha256.New()
	writeChart(h, c)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func writeChart(h hash.Hash, c *chart.Chart) {
	part := func(name string, data []byte) {
		// Length-prefixed, so that no two different charts write the same
		// stream of bytes.
		b, _ := json.Marshal(struct {
			Name string `json:"n"`
			Len  int    `json:"l"`
		}{name, len(data)})
		h.Write(b)
		h.Write(data)
	}
	// encoding/json writes map keys sorted: the same values, the same bytes.
	metadata, _ := json.Marshal(c.Metadata)
	part("Chart.yaml", metadata)
	lock, _ := json.Marshal(c.Lock)
	part("Chart.lock", lock)
	values, _ := json.Marshal(c.Values)
	part("values", values)
	part("values.schema.json", c.Schema)
	for _, group := range []struct {
		prefix string
		files  []*common.File
	}{{"templates", c.Templates}, {"files", c.Files}} {
		for _, f := range sortedFiles(group.files) {
			part(group.prefix+":"+f.Name, f.Data)
		}
	}
	deps := slices.Clone(c.Dependencies())
	slices.SortFunc(deps, func(a, b *chart.Chart) int { return strings.Compare(a.Name(), b.Name()) })
	for _, d := range deps {
		part("dependency", []byte(Digest(d)))
	}
}

func sortedFiles(files []*common.File) []*common.File {
	out := slices.Clone(files)
	slices.SortFunc(out, func(a, b *common.File) int { return strings.Compare(a.Name, b.Name) })
	return out
}
