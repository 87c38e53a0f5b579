package helmchart

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"
)

// A repository's index.yaml, reduced to what loading a chart needs. Helm's
// pkg/repo/v1 has the full types, but importing it brings pkg/getter, and
// with it Helm's CLI environment, the Kubernetes CLI runtime and the plugin
// system's WebAssembly runtime, none of which a load needs.

type repositoryIndex struct {
	APIVersion string                   `json:"apiVersion"`
	Entries    map[string][]*indexEntry `json:"entries"`
}

// indexEntry is one version of a chart in the index.
type indexEntry struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	URLs    []string `json:"urls"`
	// Digest is the sha256 of the archive, in hex; optional.
	Digest  string `json:"digest,omitempty"`
	Removed bool   `json:"removed,omitempty"`
}

// parseIndex reads an index as Helm does (YAML, or JSON, which is YAML),
// leaving out entries without a version or marked removed, and sorts each
// chart's versions newest first, as Helm does before choosing one.
func parseIndex(data []byte) (*repositoryIndex, error) {
	if len(data) == 0 {
		return nil, errors.New("it is empty")
	}
	var index repositoryIndex
	if err := yaml.Unmarshal(data, &index); err != nil {
		return nil, err
	}
	if index.APIVersion == "" {
		return nil, errors.New("it has no apiVersion")
	}
	for name, versions := range index.Entries {
		kept := make([]*indexEntry, 0, len(versions))
		for _, v := range versions {
			if v != nil && v.Version != "" && !v.Removed {
				if v.Name == "" {
					v.Name = name
				}
				kept = append(kept, v)
			}
		}
		sort.SliceStable(kept, func(i, j int) bool { return newerVersion(kept[i].Version, kept[j].Version) })
		index.Entries[name] = kept
	}
	return &index, nil
}

// newerVersion orders semantic versions newest first and puts versions that
// are not semantic after them.
func newerVersion(a, b string) bool {
	va, errA := semver.NewVersion(a)
	vb, errB := semver.NewVersion(b)
	switch {
	case errA != nil && errB != nil:
		return a > b
	case errA != nil:
		return false
	case errB != nil:
		return true
	}
	return va.GreaterThan(vb)
}

// chartURL resolves an entry's URL, which may be relative to the repository
// (the usual case) or absolute, perhaps on another host. The repository's
// query string is kept on a relative URL, as Helm keeps it: some
// repositories carry a token there.
func chartURL(repository *url.URL, ref string) (*url.URL, error) {
	parsed, err := url.Parse(ref)
	if err != nil {
		return nil, err
	}
	if parsed.IsAbs() {
		if parsed.Scheme != "http" && parsed.Scheme != "https" {
			return nil, fmt.Errorf("%s is not an http(s) URL", parsed.Scheme)
		}
		return parsed, nil
	}
	base := *repository
	base.Path = strings.TrimSuffix(base.Path, "/") + "/"
	base.RawPath = ""
	resolved := base.ResolveReference(parsed)
	resolved.RawQuery = repository.RawQuery
	return resolved, nil
}
