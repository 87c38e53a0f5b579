package helmrelease

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// lintChart checks the chart of m by `helm lint`'s rules against c's
// Kubernetes version (lint): what it finds is an error, which fails the
// plan, or a warning. It reports false when the chart is not to be
// rendered.
func lintChart(ctx context.Context, c *connection.Client, m *model, diags *diag.Diagnostics) bool {
	vals := m.chartValues(ctx, diags)
	if diags.HasError() {
		return false
	}
	found, err := helmchart.Lint(ctx, helmchart.Request{Source: m.Source(), Values: vals,
		Release: helmchart.Release{Name: m.Name.ValueString(), Namespace: m.Namespace.ValueString()},
		Cluster: &helmchart.Cluster{Config: c.Config, Discovery: c.Discovery}})
	if err != nil {
		diags.AddAttributeError(pathChart, "Chart not linted", vals.Scrub(connection.Explain(err)))
		return false
	}
	if len(found.Warnings) > 0 {
		diags.AddAttributeWarning(pathLint, "The chart's linter warns",
			"helm lint's rules warn about the chart (lint = true):\n  "+strings.Join(found.Warnings, "\n  "))
	}
	if len(found.Errors) > 0 {
		diags.AddAttributeError(pathLint, "The chart fails lint",
			"helm lint's rules find errors in the chart (lint = true), so nothing is planned:\n  "+
				strings.Join(found.Errors, "\n  ")+"\nFix the chart or the values, or set lint = false.")
		return false
	}
	return true
}
