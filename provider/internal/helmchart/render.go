package helmchart

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	chartvalues "helm.sh/helm/v4/pkg/chart/common/util"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// Release is what templates see of the release: .Release.Name,
// .Release.Namespace, .Release.Revision, .Release.IsInstall/IsUpgrade.
type Release struct {
	Name      string
	Namespace string
	Revision  int
	IsUpgrade bool
}

// Cluster is the cluster a chart is rendered against. Config builds the
// client `lookup` reads live objects with; Discovery gives .Capabilities.
type Cluster struct {
	Config    *rest.Config
	Discovery discovery.DiscoveryInterface
}

// File is one rendered file: its path in the chart (as Helm names it in
// errors and `# Source:` comments, e.g. "app/templates/deploy.yaml") and its
// YAML, which may hold several documents.
type File struct {
	Path string
	Text string
}

// Rendered is a chart's output.
type Rendered struct {
	// CRDs are the files of the crds/ directories of the chart and its
	// subcharts, which Helm installs before anything else and never renders.
	CRDs []File
	// Files are the rendered templates that hold YAML, by path: no partials,
	// no NOTES.txt, no empty file. RoleOf tells a file's hooks from its
	// objects, document by document.
	Files []File
	// Notes is the chart's rendered NOTES.txt (not its subcharts').
	Notes string
	// SubchartNotes are its subcharts' rendered NOTES.txt, by path.
	SubchartNotes []File
	// Capabilities are what the templates were rendered against.
	Capabilities *common.Capabilities
}

// Render renders the chart as `helm install --dry-run=server` does when
// cluster is set (real .Capabilities, a live lookup), and as `helm template`
// does when it is nil (Helm's default capabilities, lookup returns nothing).
// Values are validated against the chart's values.schema.json first.
func Render(ctx context.Context, c *Chart, vals map[string]any, rel Release, cluster *Cluster) (*Rendered, error) {
	caps, err := capabilities(cluster)
	if err != nil {
		return nil, err
	}
	ch := c.Chart
	if kv := ch.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart %s requires kubeVersion %s, which Kubernetes %s does not satisfy", ch.Name(), kv, caps.KubeVersion.Version)
	}
	// Subcharts switched off by condition or tag leave the chart here, and
	// import-values are resolved, as helm install does before rendering.
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return nil, fmt.Errorf("processing the dependencies of chart %s: %w", ch.Name(), err)
	}
	revision := rel.Revision
	if revision == 0 {
		revision = 1
	}
	opts := common.ReleaseOptions{Name: rel.Name, Namespace: rel.Namespace, Revision: revision,
		IsInstall: !rel.IsUpgrade, IsUpgrade: rel.IsUpgrade}
	top, err := chartvalues.ToRenderValuesWithSchemaValidation(ch, vals, opts, caps, false)
	if err != nil {
		return nil, err
	}

	var e engine.Engine
	if cluster != nil {
		e = engine.New(cluster.Config)
	}
	files, err := e.RenderWithContext(ctx, ch, top)
	if err != nil {
		return nil, err
	}

	out := &Rendered{Capabilities: caps}
	notes := path.Join(ch.Name(), "templates", "NOTES.txt")
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if strings.HasSuffix(name, "NOTES.txt") {
			if name == notes {
				out.Notes = files[name]
			} else {
				out.SubchartNotes = append(out.SubchartNotes, File{Path: name, Text: files[name]})
			}
			delete(files, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		// Partials, and files that render empty, hold no object (Helm's
		// manifest sorter skips them too).
		if strings.HasPrefix(path.Base(name), "_") || strings.TrimSpace(files[name]) == "" {
			continue
		}
		out.Files = append(out.Files, File{Path: name, Text: files[name]})
	}
	for _, crd := range ch.CRDObjects() {
		out.CRDs = append(out.CRDs, File{Path: crd.Filename, Text: string(crd.File.Data)})
	}
	return out, nil
}

// NotesWith are the notes a release keeps: the chart's own, and with
// subcharts its subcharts' after them, as `helm install
// --render-subchart-notes` joins them (a line break between two that are not
// empty), in the order of their paths where helm's order is a map's.
func (r *Rendered) NotesWith(subcharts bool) string {
	if !subcharts {
		return r.Notes
	}
	var b strings.Builder
	b.WriteString(r.Notes)
	for _, f := range r.SubchartNotes {
		if b.Len() > 0 && f.Text != "" {
			b.WriteString("\n")
		}
		b.WriteString(f.Text)
	}
	return b.String()
}

// capabilities asks the cluster what Helm's getCapabilities asks: the server
// version and every served group/version and group/version/kind. Helm's own
// function for it lives in its action package, which this package does not
// import (see doc.go); the cached discovery also serves every other read of
// the same provider process.
func capabilities(cluster *Cluster) (*common.Capabilities, error) {
	if cluster == nil {
		return common.DefaultCapabilities.Copy(), nil
	}
	v, err := cluster.Discovery.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("reading the cluster's version for .Capabilities: %w", err)
	}
	groups, resources, err := cluster.Discovery.ServerGroupsAndResources()
	// A group whose API service is down leaves the rest served; Helm renders
	// with what is there, and so do we.
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("reading the cluster's API versions for .Capabilities: %w", err)
	}
	seen := map[string]bool{}
	var versions common.VersionSet
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			versions = append(versions, s)
		}
	}
	for _, g := range groups {
		for _, gv := range g.Versions {
			add(gv.GroupVersion)
		}
	}
	for _, list := range resources {
		for _, r := range list.APIResources {
			add(list.GroupVersion + "/" + r.Kind)
		}
	}
	return &common.Capabilities{
		APIVersions: versions,
		KubeVersion: common.KubeVersion{Version: v.GitVersion, Major: v.Major, Minor: v.Minor},
		HelmVersion: common.DefaultCapabilities.HelmVersion,
	}, nil
}
