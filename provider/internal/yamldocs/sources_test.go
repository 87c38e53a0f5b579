package yamldocs

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// writeKustomization lays out a base with a Deployment and a ConfigMap, and an
// overlay that patches the Deployment and prefixes every name.
func writeKustomization(t *testing.T) (overlay string) {
	dir := t.TempDir()
	write(t, dir, "base/kustomization.yaml", "resources:\n- deployment.yaml\n- configmap.yaml\n")
	write(t, dir, "base/deployment.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`)
	write(t, dir, "base/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: \"1\"\n")
	write(t, dir, "overlay/kustomization.yaml", `namespace: prod
namePrefix: prod-
resources:
- ../base
patches:
- path: replicas.yaml
`)
	write(t, dir, "overlay/replicas.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n")
	return filepath.Join(dir, "overlay")
}

func TestKustomizeBuildsOverlayInProcess(t *testing.T) {
	docs, err := FromKustomize(writeKustomization(t), Kustomize{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Split(docs)
	if err != nil {
		t.Fatal(err)
	}
	if k := sortedKeys(got); !slices.Equal(k, []string{"apps/Deployment/prod/prod-web", "core/ConfigMap/prod/prod-settings"}) {
		t.Fatalf("keys = %v", k)
	}
	d := got["apps/Deployment/prod/prod-web"]
	if !strings.Contains(d.Text, "replicas: 3") || !strings.Contains(d.Text, "image: nginx") {
		t.Errorf("patch not applied:\n%s", d.Text)
	}
	if !strings.HasPrefix(d.Source, "kustomize build ") {
		t.Errorf("source = %q", d.Source)
	}
}

func TestKustomizeErrorsNameThePath(t *testing.T) {
	dir := t.TempDir()
	if _, err := FromKustomize(dir, Kustomize{}); err == nil || !strings.Contains(err.Error(), "kustomize build "+dir) {
		t.Errorf("no kustomization.yaml: error = %v", err)
	}
	write(t, dir, "kustomization.yaml", "resources:\n- ../outside.yaml\n")
	write(t, filepath.Dir(dir), "outside.yaml", namespace)
	if _, err := FromKustomize(dir, Kustomize{}); err == nil {
		t.Error("a file outside kustomize_path was loaded")
	}
	if _, err := FromKustomize(filepath.Join(dir, "kustomization.yaml"), Kustomize{}); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("file path: error = %v", err)
	}
}

// largeInput is a 5 MB file of 2,000 documents of assorted kinds, the size the
// data sources must split in well under a second.
func largeInput() string {
	var b strings.Builder
	pad := strings.Repeat("x", 2300)
	for i := range 2000 {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "# config %d\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: ns-%d\n  labels: {app: a%d, tier: backend}\ndata:\n  payload: %q\n  other: |\n    line one\n    line two\n---\n", i, i, i%10, i, pad)
		case 1:
			fmt.Fprintf(&b, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-%d\n  namespace: ns-%d\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web-%d}\n  template:\n    metadata:\n      labels: {app: web-%d}\n      annotations: {note: %q}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        ports: [{containerPort: 80}]\n        env:\n        - {name: A, value: \"1\"}\n---\n", i, i%10, i, i, pad)
		case 2:
			fmt.Fprintf(&b, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: role-%d\n  annotations: {note: %q}\nrules:\n- apiGroups: [\"\"]\n  resources: [pods, services]\n  verbs: [get, list, watch]\n---\n", i, pad)
		default:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns-extra-%d\n  annotations: {note: %q}\n---\n\n", i, pad)
		}
	}
	return b.String()
}

// BenchmarkSplitLarge reports, besides wall time, the CPU time the process spent
// per split (cpu-ms/op): parsing runs on every core, and on a shared machine wall
// time says more about the neighbours than about the provider.
func BenchmarkSplitLarge(b *testing.B) {
	content := largeInput()
	b.SetBytes(int64(len(content)))
	start := CPUTime()
	n := 0
	for b.Loop() {
		n++
		parsed.reset() // parsing measured, not the cache
		ms, err := Split(FromContent(content))
		if err != nil || len(ms) != 2000 {
			b.Fatalf("%d manifests, err %v", len(ms), err)
		}
		if _, err := Classify(ms, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((CPUTime()-start).Milliseconds())/float64(n), "cpu-ms/op")
}

func TestLargeInputSplits(t *testing.T) {
	content := largeInput()
	if len(content) < 5_000_000 {
		t.Fatalf("large input is %d bytes, want at least 5 MB", len(content))
	}
	ms, err := Split(FromContent(content))
	if err != nil || len(ms) != 2000 {
		t.Fatalf("%d manifests, err %v", len(ms), err)
	}
}

// The flags of `kubectl kustomize` that a kustomization may need, and the
// error that names the setting when it is missing.
func TestKustomizeLoadRestrictor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app")
	write(t, dir, "kustomization.yaml", "resources:\n- ../shared/namespace.yaml\n")
	write(t, filepath.Dir(dir), "shared/namespace.yaml", namespace)
	_, err := FromKustomize(dir, Kustomize{})
	if err == nil || !strings.Contains(err.Error(), `kustomize_options.load_restrictor = "LoadRestrictionsNone"`) {
		t.Fatalf("a file outside the kustomization, by default: want an error naming load_restrictor, got %v", err)
	}
	docs, err := FromKustomize(dir, Kustomize{LoadRestrictor: "LoadRestrictionsNone"})
	if err != nil || len(docs) != 1 || !strings.Contains(docs[0].Text, "kind: Namespace") {
		t.Fatalf("with LoadRestrictionsNone: want the namespace, got %v, %v", docs, err)
	}
}

func TestKustomizeInflatesHelmChartsWhenEnabled(t *testing.T) {
	helm, err := toolchain.Built(context.Background(), toolchain.Helm)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, dir, "kustomization.yaml", "helmGlobals: {chartHome: charts}\n"+
		"helmCharts:\n- {name: hello, releaseName: web, namespace: apps, valuesInline: {greeting: hi}}\n")
	write(t, dir, "charts/hello/Chart.yaml", "apiVersion: v2\nname: hello\nversion: 0.1.0\n")
	write(t, dir, "charts/hello/values.yaml", "greeting: hello\n")
	write(t, dir, "charts/hello/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\n"+
		"metadata: {name: '{{ .Release.Name }}-settings', namespace: '{{ .Release.Namespace }}'}\n"+
		"data: {greeting: '{{ .Values.greeting }}'}\n")
	_, err = FromKustomize(dir, Kustomize{})
	if err == nil || !strings.Contains(err.Error(), "kustomize_options.enable_helm = true") {
		t.Fatalf("helmCharts, by default: want an error naming enable_helm, got %v", err)
	}
	docs, err := FromKustomize(dir, Kustomize{EnableHelm: true, HelmCommand: helm})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || !strings.Contains(docs[0].Text, "name: web-settings") || !strings.Contains(docs[0].Text, "greeting: hi") {
		t.Fatalf("with enable_helm: want the chart's ConfigMap, got %v", docs)
	}
	_, err = FromKustomize(dir, Kustomize{EnableHelm: true, HelmCommand: filepath.Join(dir, "no-such-helm")})
	if err == nil || !strings.Contains(err.Error(), "no-such-helm") {
		t.Fatalf("a helm_command that does not exist: want an error naming it, got %v", err)
	}
}
