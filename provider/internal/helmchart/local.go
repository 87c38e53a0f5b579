package helmchart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// loadLocal reads a chart directory or packaged .tgz and completes its
// dependencies (see dependencies.go).
func loadLocal(ctx context.Context, src Source) (*Chart, error) {
	c, err := readLocalChart(src.Chart)
	if err != nil {
		return nil, err
	}
	builder := &dependencyBuilder{tls: src, building: map[string]bool{}}
	if err := builder.complete(ctx, c, src.Chart, 0); err != nil {
		return nil, err
	}
	return &Chart{Chart: c, Version: c.Metadata.Version}, nil
}

func readLocalChart(p string) (*chart.Chart, error) {
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
	return c, nil
}
