package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// What each tool does with a chart (-workload chart): helm, the baseline,
// installs, dry-runs, upgrades and uninstalls it as a release; Terraform,
// OpenTofu and Pulumi do the same through one k8sconnect_helm_release
// (HelmRelease). Each tool writes the same chart of N objects into its own
// directory at setup (untimed) and installs it as release "bench" in a
// namespace of its own, which the release creates (create_namespace,
// --create-namespace) and which stays at destroy on both sides.
//
// Readiness is not waited for on either side: the resource's wait = false,
// helm without --wait (its default, hookOnly: hooks only, and the chart has
// none). Both then measure the apply itself, not how soon kwok marks the
// Deployments' pods ready.

// chartRelease is the release's name; each tool's namespace keeps them apart.
const chartRelease = "bench"

// chartShape is how a chart of n objects divides them: one Deployment and
// one Service per 40 objects, at most 5 of each, and ConfigMaps for the rest.
func chartShape(n int) (configMaps, deployments int) {
	deployments = min(5, n/40)
	return n - 2*deployments, deployments
}

// writeChart writes a chart of n objects into dir: ConfigMaps of four keys,
// the first of which takes .Values.value (so an upgrade of that value
// changes one object), and Deployments of one pause container, each with its
// Service.
func writeChart(dir string, n int) error {
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		return err
	}
	cms, deps := chartShape(n)
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: bench\ndescription: make bench's chart (internal/cmd/k8sconnect-bench)\n" +
			"type: application\nversion: 0.1.0\nappVersion: \"1.0\"\n",
		"values.yaml": fmt.Sprintf("# The value the bench sets per operation; only cm-0000 holds it.\nvalue: %s\nconfigMaps: %d\ndeployments: %d\n",
			values[opCreate], cms, deps),
		"templates/configmaps.yaml": `{{- range $i := until (int .Values.configMaps) }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ printf "cm-%04d" $i }}
  labels:
    app.kubernetes.io/instance: {{ $.Release.Name }}
    app.kubernetes.io/name: {{ $.Chart.Name }}
data:
  key: {{ if eq $i 0 }}{{ $.Values.value | quote }}{{ else }}"fixed"{{ end }}
  index: {{ $i | quote }}
  greeting: "hello from {{ $.Release.Name }}"
  settings.yaml: |
    level: info
    replicas: 1
    shard: {{ $i }}
{{- end }}
`,
		"templates/deployments.yaml": `{{- range $i := until (int .Values.deployments) }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ printf "app-%02d" $i }}
  labels:
    app.kubernetes.io/instance: {{ $.Release.Name }}
    app.kubernetes.io/name: {{ printf "app-%02d" $i }}
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ printf "app-%02d" $i }}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{ printf "app-%02d" $i }}
    spec:
      containers:
        - name: app
          image: registry.k8s.io/pause:3.10
          ports:
            - containerPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: {{ printf "app-%02d" $i }}
  labels:
    app.kubernetes.io/instance: {{ $.Release.Name }}
spec:
  selector:
    app.kubernetes.io/name: {{ printf "app-%02d" $i }}
  ports:
    - port: 80
      targetPort: 8080
{{- end }}
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// chartSummary says what the chart holds, for the report.
func chartSummary(ns []int) string {
	var parts []string
	for _, n := range ns {
		cms, deps := chartShape(n)
		parts = append(parts, fmt.Sprintf("N=%d: %d ConfigMaps of four keys, %d Deployments of one pause replica and %d Services", n, cms, deps, deps))
	}
	return strings.Join(parts, "; ")
}

// helmTool is the chart's baseline: the pinned helm CLI, with its cache,
// configuration and data (and the Kubernetes discovery cache under HOME) in
// the work directory, so that a developer's neither helps nor receives this
// cluster's.
type helmTool struct {
	path, work, kubeconfig string
}

func (h *helmTool) name() string         { return "helm" }
func (h *helmTool) isKubectl() bool      { return true }
func (h *helmTool) stateBytes(int) int64 { return 0 }

func (h *helmTool) dir(n int) string { return filepath.Join(h.work, fmt.Sprintf("helm-%d", n)) }

func (h *helmTool) setup(_ context.Context, n int) error {
	return writeChart(filepath.Join(h.dir(n), "chart"), n)
}

// invocation: install and upgrade by Server-Side Apply, the plan a server
// dry run of the same upgrade, destroy helm uninstall; none waits for
// readiness (see above).
func (h *helmTool) invocation(op string, n int) (invocation, bool) {
	ns := namespace(h.name(), n)
	var args []string
	switch op {
	case opCreate:
		args = []string{"upgrade", "--install", "--create-namespace", "--server-side=true", chartRelease, "./chart", "--set", "value=" + values[op]}
	case opPlan:
		args = []string{"upgrade", "--dry-run=server", "--server-side=true", chartRelease, "./chart", "--set", "value=" + values[op]}
	case opUpdate:
		args = []string{"upgrade", "--server-side=true", chartRelease, "./chart", "--set", "value=" + values[op]}
	case opDestroy:
		args = []string{"uninstall", chartRelease}
	default:
		return invocation{}, false
	}
	home := filepath.Join(h.work, "helm-home")
	env := append(cleanEnv(), "KUBECONFIG="+h.kubeconfig, "HOME="+home,
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	args = append([]string{h.path}, append(args, "--namespace", ns)...)
	return invocation{args: args, dir: h.dir(n), env: env}, true
}

// Terraform and OpenTofu: one k8sconnect_helm_release of the chart beside
// the configuration, its value a variable each operation sets.

func (t *terraformTool) setupChart(n int) error {
	if err := writeChart(filepath.Join(t.dir(n), "chart"), n); err != nil {
		return err
	}
	providerConfig, perResource, backend := t.connection(n)
	main := fmt.Sprintf(`terraform {
  required_providers {
    k8sconnect = { source = "k8sconnect/k8sconnect" }
  }
%[5]s}
variable "value" {
  type = string
}
locals {
  cluster = { kubeconfig_file = %[1]q }
}
%[2]sresource "k8sconnect_helm_release" "bench" {
  name             = %[6]q
  namespace        = %[3]q
  create_namespace = true
  chart            = "${path.module}/chart"
  set              = [{ name = "value", value = var.value }]
  wait             = false
  %[4]s
}
`, t.kubeconfig, providerConfig, namespace(t.name(), n), perResource, backend, chartRelease)
	return os.WriteFile(filepath.Join(t.dir(n), "main.tf"), []byte(main), 0o600)
}

// Pulumi: the same release as a HelmRelease in a YAML program, its value
// the stack's config value.

func (p *pulumiTool) setupChart(n int) error {
	chart := filepath.Join(p.dir(n), "chart")
	if err := writeChart(chart, n); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.dir(n), "Pulumi.yaml"),
		[]byte(chartProgram(chart, namespace(p.name(), n), p.kubeconfig, p.variant)), 0o600)
}

// chartProgram is the Pulumi YAML program of one HelmRelease of the chart in
// directory chart, with the connection on the release or (providerBlock) in
// a provider resource it names.
func chartProgram(chart, ns, kubeconfig string, v variant) string {
	var b strings.Builder
	b.WriteString("name: k8sconnect-bench\nruntime: yaml\n")
	fmt.Fprintf(&b, "config:\n  value:\n    type: string\nvariables:\n  cluster:\n    kubeconfigFile: %q\nresources:\n", kubeconfig)
	connection, options := "      clusterConnection: ${cluster}\n", ""
	if v == providerBlock {
		b.WriteString("  k8sconnect:\n    type: pulumi:providers:k8sconnect\n    properties:\n      clusterConnection: ${cluster}\n")
		connection, options = "", "    options:\n      provider: ${k8sconnect}\n"
	}
	fmt.Fprintf(&b, `  release:
    type: k8sconnect:index/helmRelease:HelmRelease
    properties:
%s      name: %s
      namespace: %s
      createNamespace: true
      chart: %q
      wait: false
      set:
        - name: value
          value: ${value}
%s`, connection, chartRelease, ns, chart, options)
	return b.String()
}
