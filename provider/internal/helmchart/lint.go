package helmchart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// Findings are what `helm lint` finds in a chart: errors fail it, warnings
// do not. Each names the file it is about.
type Findings struct {
	Errors, Warnings []string
}

// Lint loads the chart of req and checks it by `helm lint`'s rules, with
// req's values, in req's release namespace and at the Kubernetes version of
// req's cluster (Helm's default without one). The linter reads a chart
// directory, so the chart as loaded (its dependencies included) is written
// to a scratch one first: what is checked is what is rendered. An error
// that keeps it from linting at all is returned as the error.
func Lint(ctx context.Context, req Request) (Findings, error) {
	vals, err := req.Values.Merge()
	if err != nil {
		return Findings{}, err
	}
	chart, err := Load(ctx, req.Source)
	if err != nil {
		return Findings{}, err
	}
	caps, err := capabilities(req.Cluster)
	if err != nil {
		return Findings{}, err
	}
	dir, err := os.MkdirTemp("", "k8sconnect-lint-")
	if err != nil {
		return Findings{}, fmt.Errorf("creating a directory to lint the chart in: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if err := chartutil.SaveDir(chart.Chart, dir); err != nil {
		return Findings{}, fmt.Errorf("writing the chart out to lint it: %w", err)
	}
	linter := lint.RunAll(filepath.Join(dir, chart.Name()), vals, req.Release.Namespace, lint.WithKubeVersion(&caps.KubeVersion))
	var out Findings
	for _, m := range linter.Messages {
		// The scratch directory means nothing to the user: paths are the
		// chart's own.
		text := strings.ReplaceAll(fmt.Sprintf("%s: %v", m.Path, m.Err), filepath.Join(dir, chart.Name())+string(filepath.Separator), "")
		switch {
		case m.Severity >= support.ErrorSev:
			out.Errors = append(out.Errors, req.Values.Scrub(text))
		case m.Severity == support.WarningSev:
			out.Warnings = append(out.Warnings, req.Values.Scrub(text))
		}
	}
	return out, nil
}
