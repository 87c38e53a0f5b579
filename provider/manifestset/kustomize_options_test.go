package manifestset_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// The kustomizations that need kubectl kustomize's flags: one that inflates
// a Helm chart (--enable-helm, --helm-command) and one that loads a file
// from outside its directory (--load-restrictor LoadRestrictionsNone). Each
// is refused at plan without its setting, naming the setting, with nothing
// applied; with it, its objects are the set's.
func TestAccManifestSet_kustomizeOptions(t *testing.T) {
	t.Parallel()
	helm, err := toolchain.Built(context.Background(), toolchain.Helm)
	if err != nil {
		t.Fatal(err)
	}
	ns := acctest.Namespace(t)
	dir, err := fixtures.KustomizationNeedingFlags(t.TempDir(), ns)
	if err != nil {
		t.Fatal(err)
	}
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
