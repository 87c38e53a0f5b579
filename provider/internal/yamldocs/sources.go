package yamldocs

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// FromContent splits inline YAML.
func FromContent(content string) []Document {
	return SplitDocuments("content", []byte(content))
}

// FromPattern reads and splits every file a glob matches, in lexical order. The
// glob is path/filepath's, plus "**" for any number of directories
// ("manifests/**/*.yaml"). Relative patterns start from the working directory
// Terraform runs in, so configurations write "${path.module}/...".
//
// A pattern that matches nothing is an error rather than an empty result: it is
// nearly always a typo or a wrong path.module, and an empty result would plan the
// destruction of every object created from the files.
func FromPattern(pattern string) ([]Document, error) {
	files, err := Glob(pattern)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		wd, _ := os.Getwd()
		return nil, fmt.Errorf("pattern %q matched no files (relative patterns start from %s; use \"${path.module}/...\" for files beside the configuration)", pattern, wd)
	}
	var docs []Document
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		docs = append(docs, SplitDocuments(f, data)...)
	}
	return docs, nil
}

// Glob returns the regular files that match pattern, sorted.
func Glob(pattern string) ([]string, error) {
	if pattern == "" {
		return nil, errors.New("pattern is empty")
	}
	if !strings.Contains(pattern, "**") {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return nil, fmt.Errorf("pattern %q is not a valid glob: %w", pattern, err)
		}
		return regularFiles(matches), nil
	}

	// Walk from the longest directory prefix without wildcards, matching the
	// path below it segment by segment.
	parts := strings.Split(filepath.ToSlash(pattern), "/")
	fixed := 0
	for fixed < len(parts)-1 && !hasMeta(parts[fixed]) {
		fixed++
	}
	root := strings.Join(parts[:fixed], "/")
	switch {
	case root == "" && strings.HasPrefix(pattern, "/"):
		root = "/"
	case root == "":
		root = "."
	}
	rest := parts[fixed:]
	for _, p := range rest {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("pattern %q is not a valid glob: %w", pattern, err)
		}
	}
	var out []string
	err := filepath.WalkDir(filepath.FromSlash(root), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == filepath.FromSlash(root) {
				if errors.Is(err, fs.ErrNotExist) {
					return fs.SkipAll // no directory, no match: reported as such by the caller
				}
				return err
			}
			return nil // an unreadable subdirectory cannot hold a match we could read
		}
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, err := filepath.Rel(filepath.FromSlash(root), p)
		if err != nil {
			return nil //nolint:nilerr // a path that is not under root cannot match: skip it, keep walking
		}
		if matchSegments(rest, strings.Split(filepath.ToSlash(rel), "/")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	return regularFiles(out), nil
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// matchSegments matches path segments against pattern segments, where "**"
// stands for zero or more whole segments.
func matchSegments(pattern, name []string) bool {
	for len(pattern) > 0 {
		if pattern[0] == "**" {
			for skip := 0; skip <= len(name); skip++ {
				if matchSegments(pattern[1:], name[skip:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pattern[0], name[0]); !ok {
			return false
		}
		pattern, name = pattern[1:], name[1:]
	}
	return len(name) == 0
}

// regularFiles keeps the paths that are files (following symlinks), sorted, so
// a directory matched by "manifests/*" is not read as a manifest.
func regularFiles(paths []string) []string {
	out := paths[:0]
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// kustomizeMu serializes builds: krusty keeps the OpenAPI schema it applies in
// package state, and Terraform reads data sources in parallel.
var kustomizeMu sync.Mutex

// kustomizeRuns counts the builds run, not taken from built: for the tests
// that a kept build is taken.
var kustomizeRuns atomic.Int64

// Kustomize holds the settings of a kustomize build that `kubectl
// kustomize` takes as flags; the zero value is its defaults.
type Kustomize struct {
	// LoadRestrictor is --load-restrictor: LoadRestrictionsRootOnly (files
	// outside the kustomization's directory may not be loaded, the default)
	// or LoadRestrictionsNone.
	LoadRestrictor string
	// EnableHelm is --enable-helm: the kustomization's helmCharts are
	// inflated by running HelmCommand (--helm-command, "helm" unless set).
	EnableHelm  bool
	HelmCommand string
}

// LoadRestrictors are the values of Kustomize.LoadRestrictor, as kubectl
// names them.
var LoadRestrictors = []string{types.LoadRestrictionsRootOnly.String(), types.LoadRestrictionsNone.String()}

func (k Kustomize) options() *krusty.Options {
	o := krusty.MakeDefaultOptions()
	if k.LoadRestrictor == types.LoadRestrictionsNone.String() {
		o.LoadRestrictions = types.LoadRestrictionsNone
	}
	if k.EnableHelm {
		o.PluginConfig.HelmConfig.Enabled = true
		o.PluginConfig.HelmConfig.Command = cmp.Or(k.HelmCommand, "helm")
	}
	return o
}

// FromKustomize builds a kustomization directory in-process, as `kubectl
// kustomize DIR` would with the flags k stands for (by default: files outside
// DIR may not be loaded, no plugins, no Helm), and returns one document per
// resource in build order.
func FromKustomize(dir string, k Kustomize) ([]Document, error) {
	if dir == "" {
		return nil, errors.New("kustomize_path is empty")
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize_path: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("kustomize_path %s is a file; it must be the directory that holds kustomization.yaml", dir)
	}
	disk := filesys.MakeFsOnDisk()
	key := buildKey{dir: dir, k: k}
	if abs, err := filepath.Abs(dir); err == nil {
		key.dir = abs
	}
	if docs, ok := built.get(key, disk); ok {
		return docs, nil
	}
	recording := &recordingFS{FileSystem: disk}
	kustomizeMu.Lock()
	kustomizeRuns.Add(1)
	resources, err := krusty.MakeKustomizer(k.options()).Run(recording, dir)
	kustomizeMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w%s", dir, err, kustomizeHint(err, k))
	}
	source := "kustomize build " + dir
	docs := make([]Document, 0, resources.Size())
	for i, r := range resources.Resources() {
		text, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("%s: resource %d: %w", source, i+1, err)
		}
		docs = append(docs, Document{Source: source, Index: i + 1, Text: normalize(string(text))})
	}
	if answers, ok := recording.recorded(); ok && !k.EnableHelm {
		built.put(key, answers, docs)
	}
	return docs, nil
}

// kustomizeHint names the setting that kustomize's error asks for by its
// command-line flag.
func kustomizeHint(err error, k Kustomize) string {
	msg := err.Error()
	switch {
	case !k.EnableHelm && strings.Contains(msg, "--enable-helm"):
		return "\n\nThe kustomization inflates Helm charts (helmCharts): set kustomize_options.enable_helm = true " +
			"(kubectl's --enable-helm), with a helm binary on PATH or named by kustomize_options.helm_command."
	case k.LoadRestrictor != types.LoadRestrictionsNone.String() && strings.Contains(msg, "is not in or below"):
		return "\n\nThe kustomization loads a file outside its directory: move the file under it, or set " +
			"kustomize_options.load_restrictor = \"LoadRestrictionsNone\" (kubectl's --load-restrictor)."
	}
	return ""
}
