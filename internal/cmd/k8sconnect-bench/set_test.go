package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// TestConfigMapsYAML: the namespace first, then N ConfigMaps in it, each
// holding the value, as kubectl applies them and a set reads them.
func TestConfigMapsYAML(t *testing.T) {
	docs := strings.Split(configMapsYAML("bench-x-3", 3, "v2"), "---\n")
	if len(docs) != 4 || docs[0] != "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bench-x-3\n" {
		t.Fatalf("%d documents, the first %q", len(docs), docs[0])
	}
	if want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-0002\n  namespace: bench-x-3\ndata:\n  key: v2\n"; docs[3] != want {
		t.Errorf("the last document %q, want %q", docs[3], want)
	}
}

// TestSetEngines: every configuration but the engine alone may hold the
// workload as a set, and its tool carries the name -engines gives it; a
// chart, one resource already, has no set.
func TestSetEngines(t *testing.T) {
	all := "terraform_set,tofu_http_backend_set,pulumi_provider_block_set,pulumi_skip_checkpoints_set,terraform"
	if e, err := parseEngines(all); err != nil || strings.Join(e, ",") != all {
		t.Errorf("parseEngines = %v, %v", e, err)
	}
	for _, bad := range []string{"terraform_data_set", "pulumi_data_set", "helm_set", "_set", "terraform_set_set", "set"} {
		if _, err := parseEngines(bad); err == nil {
			t.Errorf("parseEngines accepted %s", bad)
		}
	}
	for _, tool := range []tool{&terraformTool{engine: "tofu", variant: httpBackend, set: true}, &pulumiTool{variant: providerBlock, set: true}} {
		if _, err := parseEngines(tool.name()); err != nil || !isSet(tool) {
			t.Errorf("tool name %q: %v, isSet %v", tool.name(), err, isSet(tool))
		}
	}
	if isSet(&terraformTool{engine: "terraform"}) || isSet(&kubectlTool{}) {
		t.Error("a configuration of one resource per object is a set")
	}
	if err := chart.checkEngines([]string{"terraform_set"}); err == nil {
		t.Error("a chart accepted terraform_set")
	}
	for _, w := range []workload{configMaps, bundle} {
		if err := w.checkEngines([]string{"terraform_set", "pulumi_set"}); err != nil {
			t.Errorf("%s: %v", w, err)
		}
	}
}

// TestTerraformSet: one k8sconnect_manifest_set whose path names the file
// beside the configuration, its parent in the workload's namespace, in each
// variant; each operation's version of the file put in place before it, and
// no variable passed.
func TestTerraformSet(t *testing.T) {
	state, err := startStateServer()
	if err != nil {
		t.Fatal(err)
	}
	defer state.Close()
	ops := []string{opCreate, opPlan, opUpdate, opDestroy}
	for _, c := range []struct {
		w          workload
		n          int
		v          variant
		wantUpdate string // in the update's file
	}{
		{configMaps, 3, plain, "  name: cm-0002\n  namespace: bench-terraform-set-3\ndata:\n  key: v2\n"},
		{configMaps, 3, providerBlock, "  name: cm-0002\n  namespace: bench-terraform-provider-block-set-3\ndata:\n  key: v2\n"},
		{bundle, 73, httpBackend, "log.level: debug\n"},
	} {
		tool := &terraformTool{engine: "terraform", variant: c.v, set: true, work: t.TempDir(), bin: "/tmp/bin", kubeconfig: "/tmp/kubeconfig",
			workload: c.w, ops: ops, state: state}
		if err := tool.setup(context.Background(), c.n); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(tool.dir(c.n), "main.tf"))
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		ns := namespace(tool.name(), c.n)
		for _, want := range []string{`resource "k8sconnect_manifest_set" "bench" {`, `path      = "${path.module}/bundle.yaml"`,
			`namespace = "` + ns + `"`} {
			if !strings.Contains(src, want) {
				t.Errorf("%s %s: no %q:\n%s", c.w, tool.name(), want, src)
			}
		}
		if strings.Count(src, "resource ") != 1 || strings.Contains(src, "for_each") || strings.Contains(src, "yaml_body") ||
			strings.Contains(src, "variable") {
			t.Errorf("%s %s: more than the one set, or a body or variable in the configuration:\n%s", c.w, tool.name(), src)
		}
		_, set, _ := strings.Cut(src, `resource "k8sconnect_manifest_set"`)
		if perResource := strings.Contains(set, "cluster_connection = local.cluster"); perResource != (c.v != providerBlock) {
			t.Errorf("%s %s: the connection on the set: %v:\n%s", c.w, tool.name(), perResource, src)
		}
		if (c.v == httpBackend) != strings.Contains(src, `backend "http"`) {
			t.Errorf("%s %s: backend:\n%s", c.w, tool.name(), src)
		}
		for _, op := range ops {
			inv, _ := tool.invocation(op, c.n)
			if inv.prepare == nil || slices.Contains(inv.args, "-var") {
				t.Fatalf("%s %s %s: %v with no file to put in place, or a -var", c.w, tool.name(), op, inv.args)
			}
			if err := inv.prepare(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(tool.dir(c.n), bundleFileName))
			if err != nil {
				t.Fatal(err)
			}
			if changed := strings.Contains(string(got), c.wantUpdate); (op == opUpdate && !changed) || (op == opCreate && changed) {
				t.Errorf("%s %s: the file at %s holds the update's change: %v", c.w, tool.name(), op, changed)
			}
			if c.w == configMaps && !strings.HasPrefix(string(got), namespaceDoc(ns)) {
				t.Errorf("%s %s: the file at %s does not start with the namespace:\n%.200s", c.w, tool.name(), op, got)
			}
		}
	}
}

// TestSetProgram parses the Pulumi program of a set: one ManifestSet with
// the file's absolute path and the namespace, the connection on it or in the
// provider resource it names, and no config: the values are in the file.
func TestSetProgram(t *testing.T) {
	type resource struct {
		Type       string `yaml:"type"`
		Properties struct {
			ClusterConnection any    `yaml:"clusterConnection"`
			Path              string `yaml:"path"`
			Namespace         string `yaml:"namespace"`
		} `yaml:"properties"`
		Options struct {
			Provider string `yaml:"provider"`
		} `yaml:"options"`
	}
	for _, v := range []variant{plain, providerBlock} {
		var program struct {
			Config    map[string]any      `yaml:"config"`
			Resources map[string]resource `yaml:"resources"`
		}
		src := setProgram("/tmp/the work/bundle.yaml", "bench-pulumi-set-3", "/tmp/kubeconfig", v)
		if err := yaml.Unmarshal([]byte(src), &program); err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		r := program.Resources["set"]
		if r.Type != "k8sconnect:index/manifestSet:ManifestSet" || r.Properties.Path != "/tmp/the work/bundle.yaml" ||
			r.Properties.Namespace != "bench-pulumi-set-3" || program.Config != nil {
			t.Errorf("%s: set = %+v, config %v\n%s", v, r, program.Config, src)
		}
		want := 1
		if v == providerBlock {
			want = 2
		}
		if len(program.Resources) != want {
			t.Errorf("%s: %d resources, want %d", v, len(program.Resources), want)
		}
		if (r.Properties.ClusterConnection == "${cluster}") != (v == plain) || (r.Options.Provider == "${k8sconnect}") != (v == providerBlock) {
			t.Errorf("%s: connection %v, provider %q", v, r.Properties.ClusterConnection, r.Options.Provider)
		}
	}
}

// TestPulumiSet: the program names the file that each operation's version
// replaces; an update sets no config value.
func TestPulumiSet(t *testing.T) {
	p := &pulumiTool{path: "/bin/pulumi", work: t.TempDir(), kubeconfig: "/tmp/kubeconfig", set: true, workload: configMaps,
		ops: []string{opCreate, opUpdate, opUpdateSkip, opDestroy}}
	const n = 2
	if err := os.MkdirAll(p.dir(n), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.setupSet(n); err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile(filepath.Join(p.dir(n), "Pulumi.yaml"))
	if err != nil || !strings.Contains(string(program), "path: \""+filepath.Join(p.dir(n), bundleFileName)+"\"\n") {
		t.Fatalf("%v: the program does not name the file beside it:\n%s", err, program)
	}
	for op, value := range map[string]string{opCreate: "v1", opUpdate: "v2", opUpdateSkip: "v3"} {
		inv, ok := p.invocation(op, n)
		if !ok || inv.prepare == nil || len(inv.before) != 0 {
			t.Fatalf("%s: %+v", op, inv)
		}
		if err := inv.prepare(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(p.dir(n), bundleFileName))
		if err != nil || !strings.HasSuffix(string(got), "  key: "+value+"\n") {
			t.Errorf("%s: %v, the file:\n%s", op, err, got)
		}
	}
}

func TestSetLines(t *testing.T) {
	ms := []measurement{
		{tool: "kubectl", n: 1000, op: opCreate, duration: 30 * time.Second},
		{tool: "terraform", n: 1000, op: opCreate, duration: 40 * time.Second},
		{tool: "terraform_set", n: 1000, op: opCreate, duration: 10 * time.Second},
		{tool: "terraform", n: 1000, op: opPlan, duration: 10 * time.Second},
		{tool: "terraform_set", n: 1000, op: opPlan, duration: 5 * time.Second},
		// No per-object counterpart in the run: no line.
		{tool: "pulumi_set", n: 1000, op: opCreate, duration: 20 * time.Second},
	}
	got := setLines(ms, []int{1000}, "N")
	want := []string{"terraform_set vs terraform at N=1000 (one set against one resource per object): create 0.25x, plan (no changes) 0.50x."}
	if !slices.Equal(got, want) {
		t.Errorf("setLines =\n%q\nwant\n%q", got, want)
	}
	ms = append(ms, measurement{tool: "pulumi_set", n: 1000, op: opPlan, duration: 4 * time.Second})
	if lines := strings.Join(summaryLines(ms, []int{1000}, "N"), "\n"); !strings.Contains(lines,
		"pulumi_set vs terraform_set at N=1000: up (create, preview included) 2.00x apply; preview (no changes) 0.80x plan.") {
		t.Errorf("no Pulumi set against Terraform's:\n%s", lines)
	}
}

// TestTargetLines: a set is held to a set's targets (stricter on time than
// the objects', with its own memory limit on the bundle), against the same
// kubectl; a bundle's sizes are its objects; the engine alone is held to
// nothing.
func TestTargetLines(t *testing.T) {
	ms := []measurement{
		{tool: "kubectl", n: 73, op: opCreate, duration: 10 * time.Second},
		{tool: "terraform_set", n: 73, op: opCreate, duration: 9 * time.Second, peakKiB: 80 * 1024},
		{tool: "kubectl", n: 73, op: opPlan, duration: 4 * time.Second},
		{tool: "terraform_set", n: 73, op: opPlan, duration: 3 * time.Second, peakKiB: 110 * 1024},
		// No target: a skip-preview is no operation of the table of targets.
		{tool: "pulumi_set", n: 73, op: opUpdateSkip, duration: 30 * time.Second},
	}
	got := strings.Join(targetLines(bundle, ms, nil), "\n")
	for _, want := range []string{
		"Targets (bundle, docs/performance.md), against kubectl: create at most 1.0x, plan (no changes) at most 0.5x, update at most 1.0x, " +
			"update (CRD field) at most 1.0x; the plugins' peak RSS at most 100 MB.",
		"As one set: create at most 1.0x, plan (no changes) at most 0.5x, update at most 1.0x, update (CRD field) at most 1.0x, " +
			"destroy at most 1.0x; the plugins' peak RSS at most 150 MB.",
		"terraform_set at objects=73 against the targets: create 0.90x (met), plan (no changes) 0.75x (MISSED), peak RSS 115 MB (met).",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("target lines lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "pulumi_set") || strings.Contains(got, "kubectl at") {
		t.Errorf("a tool held to targets it has no measurement for, or kubectl to its own:\n%s", got)
	}
	ms = []measurement{
		{tool: "kubectl", n: 1000, op: opDestroy, duration: 10 * time.Second},
		{tool: "pulumi_set", n: 1000, op: opDestroy, duration: 11 * time.Second},
		{tool: "pulumi_data", n: 1000, op: opDestroy, duration: 1 * time.Second},
	}
	got = strings.Join(targetLines(configMaps, ms, []int{1000}), "\n")
	if !strings.Contains(got, "pulumi_set at N=1000 against the targets: destroy 1.10x (MISSED).") || strings.Contains(got, "pulumi_data") {
		t.Errorf("target lines:\n%s", got)
	}
}
