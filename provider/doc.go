// Package provider is the terraform-plugin-framework provider for k8sconnect.
// It is the single source of truth for the schema: Terraform and OpenTofu load
// it directly, and the Pulumi bridge in ../bridge wraps the same value, so the
// Pulumi schema, the SDKs and the docs of every engine are generated from it.
//
// # A tour
//
// This package holds the provider block (the default cluster_connection and
// the settings every resource reads) and the list of resources and data
// sources. Each resource and data source is a package of its own, beside its
// tests, and reads like the decision record it implements (docs/adr):
//
//   - object: k8sconnect_object, one Kubernetes object of any kind, planned by
//     a server-side dry run and applied with Server-Side Apply.
//   - patch: k8sconnect_patch, a few fields of an object someone else manages.
//   - wait: k8sconnect_wait, a wait that never taints the object it waits on.
//   - objectdata, yamlsplit, yamlscoped: the data sources.
//   - helmtemplate: k8sconnect_helm_template, a Helm chart rendered against
//     the cluster into yaml_scoped's maps (internal/helmchart renders it).
//
// What the resources share lives under internal/, one concern per package:
// connection (a cluster_connection to a client, and which cluster it
// reaches), manifest and kubejson (YAML to an object, exactly as kubectl
// reads it), ssa (the one write path), projection and ownership (the fields
// we own, their drift and who else owns them), refresh (the one reading of an
// object in state), sensitive (secret values, never in clear), objectpath
// (the one path language), and the rest that docs/architecture.md lists.
//
// plugin/ is the runtime both plugin binaries serve the provider through
// (per-request contexts, garbage-collector settings, CPU profiles); cmd/
// holds the Terraform plugin's main. Nothing here imports the repository's
// internal/, which builds, tests and releases the provider.
package provider
