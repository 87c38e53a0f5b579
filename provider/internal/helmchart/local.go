package helmchart

import (
	"bytes"
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
	read := readLocalChart
	if src.keyring != nil {
		read = src.keyring.readLocalChart
	}
	c, err := read(src.Chart)
	if err != nil {
		return nil, err
	}
	builder := &dependencyBuilder{chart: src, building: map[string]bool{}}
	if err := builder.complete(ctx, c, src.Chart, 0); err != nil {
		return nil, err
	}
	return &Chart{Chart: c, Version: c.Metadata.Version}, nil
}

func readLocalChart(p string) (*chart.Chart, error) {
	if err := chartExists(p); err != nil {
		return nil, err
	}
	c, err := loader.Load(p)
	if err != nil {
		return nil, fmt.Errorf("loading chart %q: %w", p, err)
	}
	return c, nil
}

func chartExists(p string) error {
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			abs, _ := filepath.Abs(p)
			return fmt.Errorf("chart %q not found (looked at %s); a chart in a repository needs `repository` set", p, abs)
		}
		return fmt.Errorf("reading chart %q: %w", p, err)
	}
	return nil
}

// readLocalChart reads a packaged chart and verifies it against the .prov
// beside it (load has refused a directory), then loads the bytes it
// verified, not the file again.
func (k *keyring) readLocalChart(p string) (*chart.Chart, error) {
	if err := chartExists(p); err != nil {
		return nil, err
	}
	archive, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading chart %q: %w", p, err)
	}
	provPath := p + ".prov"
	prov, err := os.ReadFile(provPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("verify = true, and there is no provenance file %s beside the chart: %s", provPath, noProvHint)
	case err != nil:
		return nil, fmt.Errorf("reading the provenance file %s: %w", provPath, err)
	}
	if err := k.verify(archive, prov, []string{filepath.Base(p)}, p, "the provenance file "+provPath); err != nil {
		return nil, err
	}
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("loading chart %q: %w", p, err)
	}
	return c, nil
}
