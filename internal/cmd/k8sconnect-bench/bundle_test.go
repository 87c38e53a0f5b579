package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/k8sconnect/k8sconnect/internal/testing/bundles"
)

// TestBundleAt: each update changes the bundle from what the step before
// left, and an update that is not measured changes nothing.
func TestBundleAt(t *testing.T) {
	base := bundles.New("bench-x-73")
	cm := func(b *bundles.Bundle) string {
		for _, d := range b.Documents(bundles.Namespaced) {
			if strings.Contains(d, "name: prometheus-operator-config\n") {
				_, level, _ := strings.Cut(d, "\n  log.level: ")
				level, _, _ = strings.Cut(level, "\n")
				return level
			}
		}
		return ""
	}
	widened := func(b *bundles.Bundle) bool { return b.Step(bundles.CRDs) != base.Step(bundles.CRDs) }
	all := operations
	for _, c := range []struct {
		ops      []string
		op       string
		level    string
		widened  bool
		sameAsOp string // the same bundle as at this op
	}{
		{all, opCreate, "info", false, ""},
		{all, opPlan, "info", false, opCreate},
		{all, opUpdate, "debug", false, ""},
		{all, opUpdateCRD, "debug", true, ""},
		{all, opUpdateSkip, "warn", true, ""},
		{all, opDestroy, "warn", true, opUpdateSkip},
		{[]string{opCreate, opUpdate, opUpdateSkip, opDestroy}, opUpdateSkip, "warn", false, ""},
		{[]string{opCreate, opUpdateCRD, opDestroy}, opDestroy, "info", true, ""},
	} {
		b := bundleAt(base, c.ops, c.op)
		if got := cm(b); got != c.level || widened(b) != c.widened {
			t.Errorf("ops %v at %s: log level %q, widened %v; want %q, %v", c.ops, c.op, got, widened(b), c.level, c.widened)
		}
		if c.sameAsOp != "" && b.YAML() != bundleAt(base, c.ops, c.sameAsOp).YAML() {
			t.Errorf("ops %v: %s differs from %s", c.ops, c.op, c.sameAsOp)
		}
	}
}

// TestKubectlBundle: the three steps applied in order, with a wait for the
// CRDs; dry runs to plan; deletes in reverse, waiting.
func TestKubectlBundle(t *testing.T) {
	k := &kubectlTool{path: "/bin/kubectl", work: t.TempDir(), kubeconfig: "/tmp/kubeconfig", workload: bundle, ops: operations}
	const n = 73
	if err := k.setup(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	commands := func(op string) []string {
		inv, ok := k.invocation(op, n)
		if !ok {
			t.Fatalf("kubectl has no %s", op)
		}
		var out []string
		for _, args := range append([][]string{inv.args}, inv.then...) {
			if args[0] != "/bin/kubectl" || !slices.Contains(args, "-v=6") {
				t.Errorf("%s: %v does not log kubectl's requests", op, args)
			}
			// The command and the file's step, e.g. "apply --server-side crds".
			var words []string
			for _, a := range args[1:] {
				if strings.HasSuffix(a, ".yaml") {
					words = append(words, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(a), slug(op)+"-"), ".yaml"))
				} else if !strings.HasPrefix(a, "-v=") && !strings.HasPrefix(a, "--cache-dir") && a != "-f" {
					words = append(words, a)
				}
			}
			out = append(out, strings.Join(words, " "))
		}
		return out
	}
	apply := []string{"apply --server-side crds", "wait --for=condition=Established --timeout=2m crds",
		"apply --server-side cluster-scoped", "apply --server-side namespaced"}
	for _, op := range []string{opCreate, opUpdate, opUpdateCRD} {
		if got := commands(op); !slices.Equal(got, apply) {
			t.Errorf("%s: %q", op, got)
		}
	}
	if got := commands(opPlan); !slices.Equal(got, []string{"apply --server-side --dry-run=server crds",
		"apply --server-side --dry-run=server cluster-scoped", "apply --server-side --dry-run=server namespaced"}) {
		t.Errorf("plan: %q", got)
	}
	if got := commands(opDestroy); !slices.Equal(got, []string{"delete --wait namespaced", "delete --wait cluster-scoped", "delete --wait crds"}) {
		t.Errorf("destroy: %q", got)
	}
	if _, ok := k.invocation(opUpdateSkip, n); ok {
		t.Error("kubectl has a skip-preview")
	}
	// Each operation applies its own version.
	b, err := os.ReadFile(k.stepFile(n, opUpdate, bundles.Namespaced))
	if err != nil || !strings.Contains(string(b), "log.level: debug\n") || !strings.Contains(string(b), "namespace: bench-kubectl-73\n") {
		t.Errorf("update's namespaced step: %v\n%.300s", err, b)
	}
}

// TestTerraformBundle: the configuration a user writes for the bundle's
// file, in each variant, and the file replaced before each operation.
func TestTerraformBundle(t *testing.T) {
	state, err := startStateServer()
	if err != nil {
		t.Fatal(err)
	}
	defer state.Close()
	for _, v := range []variant{plain, providerBlock, httpBackend} {
		tool := &terraformTool{engine: "terraform", variant: v, work: t.TempDir(), bin: "/tmp/bin", kubeconfig: "/tmp/kubeconfig",
			workload: bundle, ops: []string{opCreate, opPlan, opUpdate, opDestroy}, state: state}
		const n = 73
		if err := tool.setup(context.Background(), n); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(tool.dir(n), "main.tf"))
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for _, want := range []string{
			"data \"k8sconnect_yaml_scoped\" \"bundle\" {\n  pattern = \"${path.module}/bundle.yaml\"\n}",
			"bundle  = data.k8sconnect_yaml_scoped.bundle\n", "for_each  = local.bundle.crds\n",
			"for_each   = local.bundle.cluster_scoped\n",
			"for_each   = local.bundle.namespaced\n",
			"depends_on = [k8sconnect_object.crds]\n",
			"depends_on = [k8sconnect_object.crds, k8sconnect_object.cluster_scoped]\n",
		} {
			if !strings.Contains(src, want) {
				t.Errorf("%s: no %q:\n%s", tool.name(), want, src)
			}
		}
		if n := strings.Count(src, "yaml_body = each.value") + strings.Count(src, "yaml_body  = each.value"); n != 3 {
			t.Errorf("%s: %d yaml_body = each.value, want 3", tool.name(), n)
		}
		if got := strings.Count(src, "cluster_connection = local.cluster"); (v == providerBlock) != (got == 1) || (v != providerBlock && got != 3) {
			t.Errorf("%s: the connection %d times:\n%s", tool.name(), got, src)
		}
		if (v == httpBackend) != strings.Contains(src, `backend "http"`) {
			t.Errorf("%s: backend:\n%s", tool.name(), src)
		}
		// The update's file is put in place before the update, which passes
		// no variable: the configuration has none.
		inv, _ := tool.invocation(opUpdate, n)
		if inv.prepare == nil || slices.Contains(inv.args, "-var") {
			t.Fatalf("%s: update %v with no file to put in place, or a -var", tool.name(), inv.args)
		}
		if err := inv.prepare(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(tool.dir(n), bundleFileName))
		if err != nil || !strings.Contains(string(got), "log.level: debug\n") || !strings.HasPrefix(string(got), "apiVersion: apiextensions.k8s.io/v1\n") {
			t.Errorf("%s: bundle.yaml at update: %v", tool.name(), err)
		}
	}
}

// TestPulumiBundle parses the generated programs: one KubernetesObject per
// document, yamlBody the document itself, each after every object of the
// steps before it.
func TestPulumiBundle(t *testing.T) {
	b := bundles.New("bench-pulumi-73")
	for _, v := range []variant{plain, providerBlock} {
		var program pulumiProgram
		src, err := bundleProgram(b, "/tmp/kube config", v)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(src), &program); err != nil {
			t.Fatalf("%v\n%.2000s", err, src)
		}
		if p := program.Plugins.Providers; len(p) != 0 || program.Variables.Cluster.KubeconfigFile != "/tmp/kube config" {
			t.Errorf("plugins %+v, variables %+v", p, program.Variables)
		}
		want := b.Len()
		if v == providerBlock {
			want++
		}
		if len(program.Resources) != want {
			t.Fatalf("%d resources, want %d", len(program.Resources), want)
		}
		var before []string
		for _, s := range bundles.Steps {
			var names []string
			for i, doc := range b.Documents(s) {
				name := fmt.Sprintf("%s-%02d", s, i)
				r, ok := program.Resources[name]
				if !ok {
					t.Fatalf("no resource %s", name)
				}
				// The body is the document as getYamlScoped gives it: the same
				// object, as one line of JSON.
				var fromDoc, fromBody any
				if err := yaml.Unmarshal([]byte(doc), &fromDoc); err != nil {
					t.Fatal(err)
				}
				if err := yaml.Unmarshal([]byte(r.Properties.YAMLBody), &fromBody); err != nil {
					t.Fatal(err)
				}
				if r.Type != "k8sconnect:index/kubernetesObject:KubernetesObject" || !reflect.DeepEqual(fromDoc, fromBody) ||
					!strings.HasPrefix(r.Properties.YAMLBody, "{\"apiVersion\":") || strings.Contains(r.Properties.YAMLBody, "\n") {
					t.Errorf("%s: type %s, or its body is not the document as compact JSON: %.200s", name, r.Type, r.Properties.YAMLBody)
				}
				if (v == providerBlock) != (r.Options.Provider == "${k8sconnect}") || (v == providerBlock) != (r.Properties.ClusterConnection == nil) {
					t.Errorf("%s: provider %q, connection %v", name, r.Options.Provider, r.Properties.ClusterConnection)
				}
				var deps []string
				for _, d := range r.Options.DependsOn {
					deps = append(deps, strings.TrimSuffix(strings.TrimPrefix(d, "${"), "}"))
				}
				if !slices.Equal(deps, before) {
					t.Errorf("%s depends on %v, want %v", name, deps, before)
				}
				names = append(names, name)
			}
			before = append(before, names...)
		}
	}
	if got := yamlString("a ${b} \"c\" <d>\n"); got != `"a $${b} \"c\" <d>\n"` {
		t.Errorf("yamlString = %s", got)
	}
}
