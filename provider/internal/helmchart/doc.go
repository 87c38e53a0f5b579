// Package helmchart finds, loads and renders Helm charts with the Helm v4 SDK,
// for k8sconnect_helm_template and k8sconnect_helm_release.
//
// It does what `helm install --dry-run=server` does up to the point where
// Helm would talk to the cluster to change it, and no further: find the chart
// (a directory, a packaged archive on disk or at an http(s) URL, an HTTP
// chart repository or an OCI registry), merge the values as the helm CLI merges -f and --set, render the
// templates against the cluster's real capabilities with a live `lookup`, and
// sort what comes out into CRDs, hooks and objects. Applying is left to the
// resources, which apply each object as k8sconnect_object does.
//
// It uses Helm's own packages (the chart loader, the template engine, the
// value coalescing and schema validation, the hook annotations' names) rather
// than helm's action package: the actions apply what they render, and importing
// them would bring Helm's whole Kubernetes client for nothing we call.
package helmchart
