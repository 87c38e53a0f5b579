package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// TestChartShape: N objects in all, Deployments and Services only from 40
// objects on, never more than five of each.
func TestChartShape(t *testing.T) {
	for _, c := range []struct{ n, cms, deps int }{{3, 3, 0}, {40, 38, 1}, {200, 190, 5}, {1000, 990, 5}} {
		cms, deps := chartShape(c.n)
		if cms != c.cms || deps != c.deps || cms+2*deps != c.n {
			t.Errorf("chartShape(%d) = %d, %d; want %d, %d", c.n, cms, deps, c.cms, c.deps)
		}
	}
}

// TestWriteChart renders the chart with the pinned helm CLI (built if it is
// not yet; make test builds it before this package runs): N objects, and the
// value reaches the first ConfigMap only.
func TestWriteChart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the helm CLI, which may have to be built: not in -short")
	}
	helm, err := toolchain.Built(context.Background(), toolchain.Helm)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "chart")
	if err := writeChart(dir, 200); err != nil {
		t.Fatal(err)
	}
	render := func(value string) []string {
		out, err := exec.Command(helm, "template", "bench", dir, "--namespace", "ns", "--set", "value="+value).CombinedOutput()
		if err != nil {
			t.Fatalf("helm template: %v\n%s", err, out)
		}
		var docs []string
		for _, d := range strings.Split(string(out), "\n---\n") {
			if strings.Contains(d, "kind:") {
				docs = append(docs, d)
			}
		}
		return docs
	}
	v1, v2 := render("v1"), render("v2")
	if len(v1) != 200 || len(v2) != 200 {
		t.Fatalf("%d and %d objects, want 200", len(v1), len(v2))
	}
	kinds := map[string]int{}
	var changed []int
	for i := range v1 {
		for _, line := range strings.Split(v1[i], "\n") {
			if k, ok := strings.CutPrefix(line, "kind: "); ok {
				kinds[k]++
			}
		}
		if v1[i] != v2[i] {
			changed = append(changed, i)
		}
	}
	if want := map[string]int{"ConfigMap": 190, "Deployment": 5, "Service": 5}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}
	if len(changed) != 1 || !strings.Contains(v2[changed[0]], "name: cm-0000") || !strings.Contains(v2[changed[0]], `key: "v2"`) {
		t.Errorf("objects changed by the value: %v, want cm-0000 alone", changed)
	}
}

func TestHelmInvocations(t *testing.T) {
	h := &helmTool{path: "/bin/helm", work: "/work", kubeconfig: "/tmp/kubeconfig"}
	want := map[string]string{
		opCreate:  "upgrade --install --create-namespace --server-side=true bench ./chart --set value=v1",
		opPlan:    "upgrade --dry-run=server --server-side=true bench ./chart --set value=v1",
		opUpdate:  "upgrade --server-side=true bench ./chart --set value=v2",
		opDestroy: "uninstall bench",
	}
	for _, op := range operations {
		inv, ok := h.invocation(op, 200)
		w, wantOK := want[op]
		if ok != wantOK {
			t.Errorf("%s: invocation %v, want %v", op, ok, wantOK)
			continue
		}
		if !ok {
			continue
		}
		if got := strings.Join(inv.args, " "); got != "/bin/helm "+w+" --namespace bench-helm-200" {
			t.Errorf("%s: %s", op, got)
		}
		if strings.Contains(strings.Join(inv.args, " "), "--wait") {
			t.Errorf("%s waits: the chart workload waits on neither side", op)
		}
		if !slices.Contains(inv.env, "KUBECONFIG=/tmp/kubeconfig") || !slices.Contains(inv.env, "HELM_CACHE_HOME=/work/helm-home/cache") {
			t.Errorf("%s: env %v", op, inv.env)
		}
	}
}

func TestTerraformChart(t *testing.T) {
	for _, v := range []variant{plain, providerBlock} {
		tool := &terraformTool{engine: "terraform", variant: v, work: t.TempDir(), bin: "/tmp/bin", kubeconfig: "/tmp/kubeconfig",
			workload: chart}
		if err := tool.setup(context.Background(), 40); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(tool.dir(40), "main.tf"))
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for _, want := range []string{`resource "k8sconnect_helm_release" "bench" {`, `name             = "bench"`,
			`namespace        = "` + namespace(tool.name(), 40) + `"`, "create_namespace = true", `chart            = "${path.module}/chart"`,
			`set              = [{ name = "value", value = var.value }]`, "wait             = false"} {
			if !strings.Contains(src, want) {
				t.Errorf("%s: no %q:\n%s", tool.name(), want, src)
			}
		}
		_, release, _ := strings.Cut(src, `resource "k8sconnect_helm_release"`)
		if perResource := strings.Contains(release, "cluster_connection = local.cluster"); perResource != (v == plain) {
			t.Errorf("%s: the connection on the release: %v:\n%s", tool.name(), perResource, src)
		}
		if _, err := os.Stat(filepath.Join(tool.dir(40), "chart", "Chart.yaml")); err != nil {
			t.Error(err)
		}
		for op, value := range map[string]string{opCreate: "v1", opPlan: "v1", opUpdate: "v2", opDestroy: "v3"} {
			inv, _ := tool.invocation(op, 40)
			if !slices.Contains(inv.args, "value="+value) {
				t.Errorf("%s %s: %v, want value=%s", tool.name(), op, inv.args, value)
			}
		}
	}
}

func TestChartProgram(t *testing.T) {
	type release struct {
		Type       string `yaml:"type"`
		Properties struct {
			ClusterConnection any    `yaml:"clusterConnection"`
			Name              string `yaml:"name"`
			Namespace         string `yaml:"namespace"`
			CreateNamespace   bool   `yaml:"createNamespace"`
			Chart             string `yaml:"chart"`
			Wait              *bool  `yaml:"wait"`
			Set               []struct {
				Name  string `yaml:"name"`
				Value string `yaml:"value"`
			} `yaml:"set"`
		} `yaml:"properties"`
		Options struct {
			Provider string `yaml:"provider"`
		} `yaml:"options"`
	}
	for _, v := range []variant{plain, providerBlock} {
		var program struct {
			Config    map[string]any     `yaml:"config"`
			Plugins   map[string]any     `yaml:"plugins"`
			Resources map[string]release `yaml:"resources"`
		}
		src := chartProgram("/tmp/the chart", "bench-pulumi-3", "/tmp/kubeconfig", v)
		if err := yaml.Unmarshal([]byte(src), &program); err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		if program.Plugins != nil {
			t.Errorf("%s: plugins = %v, want none: the engine runs the installed plugin", v, program.Plugins)
		}
		r := program.Resources["release"]
		p := r.Properties
		if r.Type != "k8sconnect:index/helmRelease:HelmRelease" || p.Name != "bench" || p.Namespace != "bench-pulumi-3" ||
			!p.CreateNamespace || p.Chart != "/tmp/the chart" || p.Wait == nil || *p.Wait ||
			len(p.Set) != 1 || p.Set[0].Name != "value" || p.Set[0].Value != "${value}" || program.Config["value"] == nil {
			t.Errorf("%s: release = %+v\n%s", v, r, src)
		}
		if (p.ClusterConnection == "${cluster}") != (v == plain) || (r.Options.Provider == "${k8sconnect}") != (v == providerBlock) {
			t.Errorf("%s: connection %v, provider %q", v, p.ClusterConnection, r.Options.Provider)
		}
	}
}

func TestChartReport(t *testing.T) {
	if !strings.Contains(strings.Join(tableHeader(chart), " "), "vs helm") || chart.baseline() != "helm" || chart.defaultNs() != "200" {
		t.Errorf("header %v, baseline %s, default N %s", tableHeader(chart), chart.baseline(), chart.defaultNs())
	}
	if err := chart.checkEngines([]string{"terraform", "pulumi_data"}); err == nil {
		t.Error("a chart accepted pulumi_data, which has no provider to install it")
	}
	ms := []measurement{
		{tool: "helm", n: 200, op: opCreate, duration: 2 * time.Second, objects: 200, requestsUnknown: true, peakKiB: 90 * 1024},
		{tool: "terraform", n: 200, op: opCreate, duration: 2500 * time.Millisecond, objects: 200, requests: requestStats{total: 400},
			peakKiB: 100 * 1024},
		{tool: "helm", n: 200, op: opPlan, duration: 1 * time.Second, objects: 200, requestsUnknown: true},
		{tool: "terraform", n: 200, op: opPlan, duration: 1200 * time.Millisecond, objects: 200, peakKiB: 160 * 1024},
	}
	rows := tableRows(ms, "helm")
	if rows[0][4] != "" || rows[0][5] != "" || rows[1][4] != "1.25" || rows[1][5] != "2.00" || rows[3][4] != "1.20" {
		t.Errorf("rows = %q", rows)
	}
	got := strings.Join(targetLines(chart, ms, []int{200}), "\n")
	if want := "terraform at N=200 against the targets: create 1.25x (met), plan (no changes) 1.20x (MISSED), peak RSS 168 MB (MISSED)."; !strings.Contains(got, want) {
		t.Errorf("target lines lack %q:\n%s", want, got)
	}
	if strings.Contains(got, "helm at") {
		t.Errorf("helm held to its own targets:\n%s", got)
	}
	if lines := strings.Join(summaryLines(ms, []int{200}, "N"), "\n"); strings.Contains(lines, "Discovery requests, helm") {
		t.Errorf("helm's uncounted requests in the notes:\n%s", lines)
	}
}
