package manifestset_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// The kustomizations that need kubectl kustomize's flags: one that inflates
// a Helm chart (--enable-helm, --helm-command) and one that loads a file
// from outside its directory (--load-restrictor LoadRestrictionsNone). Each
// is refused at plan without its setting, naming the setting, with nothing
// applied; with it, its objects are the set's.
func TestAccManifestSet_kustomizeOptions(t *testing.T) {
	t.Parallel()
	if err := toolchain.Ensure(context.Background(), toolchain.Helm); err != nil {
		t.Fatal(err)
	}
	helm, err := toolchain.Path(toolchain.Helm)
	if err != nil {
		t.Fatal(err)
	}
	ns := acctest.Namespace(t)
	root := t.TempDir()
	for name, text := range map[string]string{
		"app/kustomization.yaml": fmt.Sprintf("namespace: %s\nresources: [../shared/settings.yaml]\n"+
			"helmGlobals: {chartHome: charts}\n"+
			"helmCharts:\n- {name: hello, releaseName: web, namespace: %s, valuesInline: {greeting: hi}}\n", ns, ns),
		"app/charts/hello/Chart.yaml":        "apiVersion: v2\nname: hello\nversion: 0.1.0\n",
		"app/charts/hello/values.yaml":       "greeting: hello\n",
		"app/charts/hello/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}-greeting'}\ndata: {greeting: '{{ .Values.greeting }}'}\n",
		"shared/settings.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared-settings}\ndata: {color: blue}\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, "app")
	source := fmt.Sprintf("kustomization = %q", dir)

	for _, tc := range []struct {
		what, options, want string
	}{
		{"no options", "", `kustomize_options.load_restrictor = "LoadRestrictionsNone"`},
		{"the restrictor alone", `kustomize_options = { load_restrictor = "LoadRestrictionsNone" }`,
			"kustomize_options.enable_helm = true"},
		{"helm alone", fmt.Sprintf("kustomize_options = { enable_helm = true, helm_command = %q }", helm),
			`kustomize_options.load_restrictor = "LoadRestrictionsNone"`},
		{"an unknown restrictor", `kustomize_options = { load_restrictor = "none" }`, "LoadRestrictionsRootOnly"},
	} {
		bad := acctest.NewWorkdir(t)
		bad.Write(setConfig(t, "kust", source, tc.options))
		r := bad.Plan()
		bad.MustFail(r, tc.what)
		if !r.HasError(tc.want) {
			t.Errorf("%s: the plan's error should say %q:\n%s", tc.what, tc.want, r.Output)
		}
		acctest.MustNotExist(t, configMaps, ns, "web-greeting")
	}
	// Options without a kustomization.
	bad := acctest.NewWorkdir(t)
	bad.Write(setConfig(t, "kust", yamlBody(configMap(ns, "x", "y")), "kustomize_options = { enable_helm = true }"))
	if r := bad.Plan(); r.Err == nil || !r.HasError("kustomization") {
		t.Errorf("kustomize_options without a kustomization should fail the plan naming it:\n%s", r.Output)
	}

	w := acctest.NewWorkdir(t)
	// The chart's ConfigMap sets no namespace (kustomize's namespace does
	// not reach what a chart renders): the set's namespace is its.
	w.Write(setConfig(t, "kust", source, fmt.Sprintf("namespace = %q\n  "+
		"kustomize_options = { enable_helm = true, helm_command = %q, load_restrictor = \"LoadRestrictionsNone\" }", ns, helm)))
	w.Cleanup()
	w.MustApply()
	if got := acctest.MustGet(t, configMaps, ns, "web-greeting").Object["data"]; fmt.Sprint(got) != "map[greeting:hi]" {
		t.Errorf("the chart's ConfigMap: data %v, want greeting: hi", got)
	}
	acctest.MustGet(t, configMaps, ns, "shared-settings")
	w.MustPlanNoChanges()
}
