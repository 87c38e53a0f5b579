package helmchart

import (
	"context"

	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// The titles of the diagnostics a failure of LoadAndRender is reported
// under, one per step, the same for the data source and the release.
const (
	InvalidValues      = "Invalid values"
	ChartNotLoaded     = "Chart not loaded"
	ChartNotRendered   = "Chart not rendered"
	InvalidChartOutput = "Invalid chart output"
)

// Failure is the step of LoadAndRender that failed: Title is its
// diagnostic's title, Err what went wrong. Each caller words Err for its
// users (scrubbed of set_sensitive values, with what to do about a cluster's
// answer); an InvalidChartOutput's Err joins one error per document
// (yamldocs.Errors).
type Failure struct {
	Title string
	Err   error
}

func (f *Failure) Error() string { return f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

// Request is a chart to render and what it is rendered with.
type Request struct {
	Source  Source
	Values  Values
	Release Release
	// Cluster is the cluster rendered against (Render); nil renders as
	// `helm template` does.
	Cluster *Cluster
	// Finder tells the scope of the kinds of the chart's objects (Sort).
	Finder yamldocs.ScopeFinder
	// PostRenderer, when set, is what the rendered objects are piped
	// through before they are read.
	PostRenderer *PostRenderer
	// DisableOpenAPIValidation leaves out of every object the fields the
	// schema Cluster publishes for its kind does not declare, as helm
	// --disable-openapi-validation has the API server drop them
	// (pruneUnknownFields). Without a Cluster nothing is left out, as helm
	// template checks nothing.
	DisableOpenAPIValidation bool
}

// Output is a chart loaded, rendered and read into objects.
type Output struct {
	Chart    *Chart
	Rendered *Rendered
	Sorted   Sorted
	// Config are the user's values merged, as a release record keeps them;
	// merged anew, since Render coalesces the chart's defaults into the
	// values it is given.
	Config map[string]any
	// Pruned are, by key, the fields DisableOpenAPIValidation left out.
	Pruned map[string][]string
}

// LoadAndRender merges the values, loads the chart, renders it and sorts
// what it rendered, as both the data source and the release need it. On a
// failure the output holds what the steps before it made (Chart once loaded,
// Rendered once rendered), so that a caller can still say what it knows of
// the chart.
func LoadAndRender(ctx context.Context, req Request) (*Output, *Failure) {
	out := &Output{}
	merged, err := req.Values.Merge()
	if err != nil {
		return out, &Failure{Title: InvalidValues, Err: err}
	}
	chart, err := Load(ctx, req.Source)
	if err != nil {
		return out, &Failure{Title: ChartNotLoaded, Err: err}
	}
	out.Chart = chart
	rendered, err := Render(ctx, chart, merged, req.Release, req.Cluster)
	if err != nil {
		return out, &Failure{Title: ChartNotRendered, Err: err}
	}
	out.Rendered = rendered
	if req.PostRenderer != nil {
		if err := req.PostRenderer.run(ctx, rendered); err != nil {
			return out, &Failure{Title: PostRenderFailed, Err: err}
		}
	}
	sorted, err := Sort(rendered, req.Finder, req.Release.Namespace)
	if err != nil {
		return out, &Failure{Title: InvalidChartOutput, Err: err}
	}
	if req.DisableOpenAPIValidation && req.Cluster != nil {
		if out.Pruned, err = pruneUnknownFields(&sorted, req.Cluster.Discovery); err != nil {
			return out, &Failure{Title: InvalidChartOutput, Err: err}
		}
	}
	out.Sorted = sorted
	config, err := req.Values.Merge()
	if err != nil {
		return out, &Failure{Title: InvalidValues, Err: err}
	}
	out.Config = config
	return out, nil
}
