package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/k8sconnect/k8sconnect/internal/testing/bundles"
)

// What each tool does with a bundle (-workload bundle): kubectl applies its
// three steps in order, Terraform and OpenTofu read its file with
// k8sconnect_yaml_scoped, Pulumi runs a program with one object per
// document. Each tool writes every version the operations will apply at
// setup (untimed), one file per operation.

// bundleSummary says what the bundle holds, for the report.
func bundleSummary() string {
	b := bundles.New("summary")
	var sizes []int
	total := 0
	for _, d := range b.Documents(bundles.CRDs) {
		sizes = append(sizes, len(d))
		total += len(d)
	}
	return fmt.Sprintf("%d objects of %d kinds in %.1f MB of YAML: %d CRDs of %.0f to %.0f KB (%.2f MB), "+
		"%d other cluster-scoped objects and %d namespaced ones, a custom resource of each CRD among them",
		b.Len(), len(b.Kinds()), float64(len(b.YAML()))/1e6, len(sizes), float64(slices.Min(sizes))/1e3,
		float64(slices.Max(sizes))/1e3, float64(total)/1e6, len(b.Documents(bundles.ClusterScoped)),
		len(b.Documents(bundles.Namespaced)))
}

// versions calls write with the bundle as it stands at each operation.
func versions(name string, ops []string, write func(op string, b *bundles.Bundle) error) error {
	base := bundles.New(name)
	for _, op := range ops {
		if err := write(op, bundleAt(base, ops, op)); err != nil {
			return err
		}
	}
	return nil
}

// kubectl: each step's documents in a file of their own, per operation.

func (k *kubectlTool) stepFile(n int, op string, s bundles.Step) string {
	return filepath.Join(k.dir(n), slug(op)+"-"+s.String()+".yaml")
}

func (k *kubectlTool) setupBundle(n int) error {
	return versions(namespace(k.name(), n), k.ops, func(op string, b *bundles.Bundle) error {
		for _, s := range bundles.Steps {
			if err := os.WriteFile(k.stepFile(n, op, s), []byte(b.Step(s)), 0o600); err != nil {
				return err
			}
		}
		return nil
	})
}

// bundleInvocation is what a user runs with kubectl: the CRDs, a wait until
// they are Established (their kinds are served only then), the other
// cluster-scoped objects, the namespaced ones; the same with
// --dry-run=server to plan; deletes in the reverse order, each waiting for
// its objects to be gone.
func (k *kubectlTool) bundleInvocation(op string, n int) (invocation, bool) {
	file := func(s bundles.Step) string { return k.stepFile(n, op, s) }
	var cmds [][]string
	switch op {
	case opCreate, opUpdate, opUpdateCRD:
		cmds = [][]string{
			k.command("apply", "--server-side", "-f", file(bundles.CRDs)),
			k.command("wait", "--for=condition=Established", "--timeout=2m", "-f", file(bundles.CRDs)),
			k.command("apply", "--server-side", "-f", file(bundles.ClusterScoped)),
			k.command("apply", "--server-side", "-f", file(bundles.Namespaced)),
		}
	case opPlan:
		for _, s := range bundles.Steps {
			cmds = append(cmds, k.command("apply", "--server-side", "--dry-run=server", "-f", file(s)))
		}
	case opDestroy:
		for i := len(bundles.Steps) - 1; i >= 0; i-- {
			cmds = append(cmds, k.command("delete", "--wait", "-f", file(bundles.Steps[i])))
		}
	default:
		return invocation{}, false
	}
	return invocation{args: cmds[0], then: cmds[1:], dir: k.dir(n), env: append(cleanEnv(), "KUBECONFIG="+k.kubeconfig)}, true
}

// Terraform and OpenTofu: the configuration a user writes for a vendor's
// file, which each operation's version replaces.

// bundleFileName is the bundle's file (a set's manifests), beside the
// configuration.
const bundleFileName = "bundle.yaml"

// bundleFile is the bundle (a set's manifests) as it stands at op.
func (t *terraformTool) bundleFile(n int, op string) string {
	return filepath.Join(t.dir(n), "versions", slug(op)+".yaml")
}

func (t *terraformTool) setupBundle(n int) error {
	err := writeManifestVersions(bundle, namespace(t.name(), n), n, t.ops, func(op string) string { return t.bundleFile(n, op) })
	if err != nil {
		return err
	}
	providerConfig, perResource, backend := t.connection(n)
	return os.WriteFile(filepath.Join(t.dir(n), "main.tf"), []byte(bundleConfig(t.kubeconfig, providerConfig, perResource, backend)), 0o600)
}

// bundleConfig is the configuration of docs/data-sources/yaml_scoped.md: the
// file sorted by scope, then one for_each per scope, each after the ones
// it needs (a custom resource after its CRD, everything namespaced after its
// Namespace), each naming the data source through a local as that page and
// the large-configurations guide say (OpenTofu decodes a data source's
// stored result at every instance's for_each: 4.0 s against 2.0 for this
// bundle's no-change plan). The bodies are known at plan time: the data
// source reads a file, not an object's outputs.
func bundleConfig(kubeconfig, providerConfig, perResource, backend string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    k8sconnect = { source = "k8sconnect/k8sconnect" }
  }
%[4]s}
locals {
  cluster = { kubeconfig_file = %[1]q }
  bundle  = data.k8sconnect_yaml_scoped.bundle
}
%[2]sdata "k8sconnect_yaml_scoped" "bundle" {
  pattern = "${path.module}/%[5]s"
}
resource "k8sconnect_object" "crds" {
  for_each  = local.bundle.crds
  yaml_body = each.value
  %[3]s
}
resource "k8sconnect_object" "cluster_scoped" {
  for_each   = local.bundle.cluster_scoped
  yaml_body  = each.value
  %[3]s
  depends_on = [k8sconnect_object.crds]
}
resource "k8sconnect_object" "namespaced" {
  for_each   = local.bundle.namespaced
  yaml_body  = each.value
  %[3]s
  depends_on = [k8sconnect_object.crds, k8sconnect_object.cluster_scoped]
}
`, kubeconfig, providerConfig, perResource, backend, bundleFileName)
}

// Pulumi: a program per operation, which replaces Pulumi.yaml before it.

func (p *pulumiTool) programFile(n int, op string) string {
	return filepath.Join(p.dir(n), "versions", slug(op)+".yaml")
}

func (p *pulumiTool) setupBundle(n int) error {
	if err := os.MkdirAll(filepath.Join(p.dir(n), "versions"), 0o755); err != nil {
		return err
	}
	err := versions(namespace(p.name(), n), p.ops, func(op string, b *bundles.Bundle) error {
		program, err := bundleProgram(b, p.kubeconfig, p.variant)
		if err != nil {
			return err
		}
		return os.WriteFile(p.programFile(n, op), []byte(program), 0o600)
	})
	if err != nil {
		return err
	}
	// stack init reads the project from Pulumi.yaml.
	return copyFile(p.programFile(n, opCreate), filepath.Join(p.dir(n), "Pulumi.yaml"))
}

// bundleProgram is the Pulumi YAML program of a bundle: one KubernetesObject
// per document, as a TypeScript program's loop over getYamlScoped's three
// maps makes them: its yamlBody the document as getYamlScoped hands it out
// (scopedBody), each cluster-scoped object depending on every CRD, each
// namespaced object on every CRD and every cluster-scoped object. The
// connection is on each object or (providerBlock) in a provider resource
// they all name.
func bundleProgram(b *bundles.Bundle, kubeconfig string, v variant) (string, error) {
	var out strings.Builder
	out.WriteString("name: k8sconnect-bench\nruntime: yaml\n")
	fmt.Fprintf(&out, "variables:\n  cluster:\n    kubeconfigFile: %q\nresources:\n", kubeconfig)
	connection, provider := "      clusterConnection: ${cluster}\n", ""
	if v == providerBlock {
		out.WriteString("  k8sconnect:\n    type: pulumi:providers:k8sconnect\n    properties:\n      clusterConnection: ${cluster}\n")
		connection, provider = "", "      provider: ${k8sconnect}\n"
	}
	var before []string // the resources every object of the next step depends on
	for _, s := range bundles.Steps {
		var names []string
		for i, doc := range b.Documents(s) {
			name := fmt.Sprintf("%s-%02d", s, i)
			names = append(names, name)
			body, err := scopedBody(doc)
			if err != nil {
				return "", fmt.Errorf("%s: %w", name, err)
			}
			fmt.Fprintf(&out, "  %s:\n    type: k8sconnect:index/kubernetesObject:KubernetesObject\n    properties:\n%s      yamlBody: %s\n",
				name, connection, yamlString(body))
			if len(before) == 0 && provider == "" {
				continue
			}
			out.WriteString("    options:\n" + provider)
			if len(before) > 0 {
				out.WriteString("      dependsOn:\n")
				for _, d := range before {
					out.WriteString("        - ${" + d + "}\n")
				}
			}
		}
		before = append(before, names...)
	}
	return out.String(), nil
}

// scopedBody is a document as k8sconnect_yaml_scoped and getYamlScoped hand
// it out (provider/internal/yamldocs' jsonBody, ADR 0011): compact JSON, read
// from the YAML as kubectl reads it. The bundle is ASCII, so the escapes
// jsonBody adds beyond ASCII never apply.
func scopedBody(doc string) (string, error) {
	raw, err := utilyaml.ToJSON([]byte(doc))
	if err != nil {
		return "", err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return "", err
	}
	return compact.String(), nil
}

// yamlString is s as a YAML double-quoted scalar (JSON's string syntax is
// YAML's), with "${" escaped as "$${", which Pulumi YAML would otherwise
// interpolate.
func yamlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(strings.ReplaceAll(s, "${", "$${"))
	return strings.TrimSuffix(b.String(), "\n")
}
