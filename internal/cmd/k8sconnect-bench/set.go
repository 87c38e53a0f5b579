package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/k8sconnect/k8sconnect/internal/testing/bundles"
)

// What an engine does with a configuration named with setSuffix
// (terraform_set, pulumi_provider_block_set, ...): the workload's objects,
// N ConfigMaps and their namespace or the vendor's bundle, as one
// k8sconnect_manifest_set (Pulumi's ManifestSet) instead of one resource per
// object. Nothing else changes: kubectl applies the same files as for the
// workload's other configurations, each operation changes the same values,
// and per-object figures divide by the same objects, so a set's row and a
// for_each's row of one run compare directly, against one kubectl.
//
// The set reads its manifests from a file the bench writes beside the
// configuration (path), not from yaml_body: a body of 1,000 ConfigMaps or of
// the 4.2 MB bundle would sit in the configuration and in the state beside
// the objects' projections, and would be shown in every plan, which is what
// the resource's own description steers users away from. Each operation's
// version of the file is written at setup and put in place before it, as a
// user edits theirs.
//
// The set does not wait for readiness (wait = false): kubectl apply does
// not, nor does a k8sconnect_object, and the rows compare the applies.

// setSuffix ends the -engines name of a configuration that holds the
// workload as one set.
const setSuffix = "_set"

// setName is the suffix of the table name of a configuration that holds the
// workload as one set, if it does.
func setName(set bool) string {
	if set {
		return setSuffix
	}
	return ""
}

// manifestsFileName is the file the set's path names, beside the
// configuration: the bundle's file, or the ConfigMaps'.
const manifestsFileName = bundleFileName

// namespaceDoc is the Namespace ns as a YAML document.
func namespaceDoc(ns string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)
}

// configMapDoc is ConfigMap i of namespace ns, holding value, as a YAML
// document.
func configMapDoc(ns string, i int, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%04d\n  namespace: %s\ndata:\n  key: %s\n", i, ns, value)
}

// configMapsYAML is the ConfigMaps workload's file: the namespace ns, then n
// ConfigMaps in it, each holding value.
func configMapsYAML(ns string, n int, value string) string {
	docs := []string{namespaceDoc(ns)}
	for i := 0; i < n; i++ {
		docs = append(docs, configMapDoc(ns, i, value))
	}
	return strings.Join(docs, "---\n")
}

// writeManifestVersions writes the workload's manifests as they stand at each
// of ops into file(op): the bundle installed as ns (bundleAt), or the
// namespace ns and its n ConfigMaps holding the operation's value.
func writeManifestVersions(w workload, ns string, n int, ops []string, file func(op string) string) error {
	if err := os.MkdirAll(filepath.Dir(file(opCreate)), 0o755); err != nil {
		return err
	}
	if w == bundle {
		return versions(ns, ops, func(op string, b *bundles.Bundle) error {
			return os.WriteFile(file(op), []byte(b.YAML()), 0o600)
		})
	}
	for _, op := range ops {
		if err := os.WriteFile(file(op), []byte(configMapsYAML(ns, n, values[op])), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Terraform and OpenTofu: one k8sconnect_manifest_set of the file, as the
// resource's example writes one, its ApplySet parent in the workload's
// namespace (which the set makes first).

func (t *terraformTool) setupSet(n int) error {
	ns := namespace(t.name(), n)
	if err := writeManifestVersions(t.workload, ns, n, t.ops, func(op string) string { return t.bundleFile(n, op) }); err != nil {
		return err
	}
	providerConfig, perResource, backend := t.connection(n)
	return os.WriteFile(filepath.Join(t.dir(n), "main.tf"), []byte(setConfig(t.kubeconfig, ns, providerConfig, perResource, backend)), 0o600)
}

// setConfig is the Terraform configuration of one set of the manifests'
// file in namespace ns, with the connection on the set or (providerConfig)
// in the provider block, and the backend block.
func setConfig(kubeconfig, ns, providerConfig, perResource, backend string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    k8sconnect = { source = "k8sconnect/k8sconnect" }
  }
%[4]s}
locals {
  cluster = { kubeconfig_file = %[1]q }
}
%[2]sresource "k8sconnect_manifest_set" "bench" {
  path      = "${path.module}/%[5]s"
  namespace = %[6]q
  wait      = false
  %[3]s
}
`, kubeconfig, providerConfig, perResource, backend, manifestsFileName, ns)
}

// Pulumi: one ManifestSet in a YAML program that stays as it is; only the
// file changes.

// manifestsFile is the set's manifests as they stand at op.
func (p *pulumiTool) manifestsFile(n int, op string) string {
	return filepath.Join(p.dir(n), "versions", slug(op)+".yaml")
}

func (p *pulumiTool) setupSet(n int) error {
	ns := namespace(p.name(), n)
	if err := writeManifestVersions(p.workload, ns, n, p.ops, func(op string) string { return p.manifestsFile(n, op) }); err != nil {
		return err
	}
	program := setProgram(filepath.Join(p.dir(n), manifestsFileName), ns, p.kubeconfig, p.variant)
	return os.WriteFile(filepath.Join(p.dir(n), "Pulumi.yaml"), []byte(program), 0o600)
}

// setProgram is the Pulumi YAML program of one ManifestSet of the file at
// path (absolute: the plugin's working directory is the engine's to choose)
// in namespace ns, with the connection on the set or (providerBlock) in a
// provider resource it names.
func setProgram(path, ns, kubeconfig string, v variant) string {
	var b strings.Builder
	b.WriteString("name: k8sconnect-bench\nruntime: yaml\n")
	fmt.Fprintf(&b, "variables:\n  cluster:\n    kubeconfigFile: %q\nresources:\n", kubeconfig)
	connection, options := "      clusterConnection: ${cluster}\n", ""
	if v == providerBlock {
		b.WriteString("  k8sconnect:\n    type: pulumi:providers:k8sconnect\n    properties:\n      clusterConnection: ${cluster}\n")
		connection, options = "", "    options:\n      provider: ${k8sconnect}\n"
	}
	fmt.Fprintf(&b, `  set:
    type: k8sconnect:index/manifestSet:ManifestSet
    properties:
%s      path: %q
      namespace: %s
      wait: false
%s`, connection, path, ns, options)
	return b.String()
}

// isSet: the tool is an engine configuration that holds the workload as one
// set.
func isSet(t tool) bool { return strings.HasSuffix(t.name(), setSuffix) }

// setLines are the notes that put each set beside the same configuration
// with one resource per object, when the run measured both: per operation,
// the set's time over theirs at each size (N, or a bundle's objects), which
// is what holding the objects as one resource saves.
func setLines(ms []measurement, ns []int, size string) []string {
	var lines []string
	var sets []string
	for _, m := range ms {
		if strings.HasSuffix(m.tool, setSuffix) && !slices.Contains(sets, m.tool) {
			sets = append(sets, m.tool)
		}
	}
	for _, set := range sets {
		each := strings.TrimSuffix(set, setSuffix)
		for _, n := range ns {
			var parts []string
			for _, op := range operations {
				a, ok1 := find(ms, set, n, op)
				b, ok2 := find(ms, each, n, op)
				if ok1 && ok2 {
					parts = append(parts, fmt.Sprintf("%s %.2fx", op, a.duration.Seconds()/b.duration.Seconds()))
				}
			}
			if len(parts) > 0 {
				lines = append(lines, fmt.Sprintf("%s vs %s at %s=%d (one set against one resource per object): %s.",
					set, each, size, n, strings.Join(parts, ", ")))
			}
		}
	}
	return lines
}
