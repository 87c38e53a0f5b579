package helmchart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// Source is where a chart is, in the words of the resource's arguments (the
// names hashicorp/helm's helm_release uses for the same things).
type Source struct {
	// Chart is a local directory or packaged .tgz when Repository is empty, a
	// chart name in the repository otherwise, or a full oci:// reference.
	Chart string
	// Repository is an HTTP(S) chart repository URL or an oci:// registry
	// path; empty for a local chart or a full oci:// Chart.
	Repository string
	// Version is an exact version or a semver constraint; empty means the
	// latest stable version. Local charts are taken as they are.
	Version string
	// Credentials for the repository or registry; never logged or returned in
	// an error.
	Username string
	Password string
	// CAFile, CertFile and KeyFile are PEM files for the repository's TLS.
	CAFile   string
	CertFile string
	KeyFile  string
	// Devel lets an empty Version or a constraint pick pre-releases.
	Devel bool
}

// Chart is a loaded chart and the exact version it resolved to.
type Chart struct {
	*chart.Chart
	// Version is the chart's exact version (Chart.yaml's), recorded in state
	// so a constraint that later matches a newer release shows as a change.
	Version string
}

// Remote reports whether the chart comes from a repository or registry
// rather than the local file system.
func (s Source) Remote() bool {
	return s.Repository != "" || strings.HasPrefix(s.Chart, "oci://")
}

// errRemoteNotYet is returned for repositories and registries until Locate
// knows them.
var errRemoteNotYet = errors.New("charts from a repository or an OCI registry are not supported yet")

// Load finds and loads the chart. A local chart is read from disk as it is;
// its dependencies must be in its charts/ directory, as helm install expects.
func Load(ctx context.Context, src Source) (*Chart, error) {
	if src.Remote() {
		return nil, errRemoteNotYet
	}
	return loadLocal(src.Chart)
}

func loadLocal(p string) (*Chart, error) {
	if p == "" {
		return nil, errors.New("chart is empty: give a chart directory, a packaged .tgz, or a chart name with repository")
	}
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			abs, _ := filepath.Abs(p)
			return nil, fmt.Errorf("chart %q not found (looked at %s); a chart in a repository needs `repository` set", p, abs)
		}
		return nil, fmt.Errorf("reading chart %q: %w", p, err)
	}
	c, err := loader.Load(p)
	if err != nil {
		return nil, fmt.Errorf("loading chart %q: %w", p, err)
	}
	return &Chart{Chart: c, Version: c.Metadata.Version}, nil
}
