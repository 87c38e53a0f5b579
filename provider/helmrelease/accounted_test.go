package helmrelease_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// An object `helm upgrade` added to our release from elsewhere is the
// release's: the next plan names its deletion (it leaves objects), the apply
// deletes it, and it is absent from the next record, so helm get manifest
// agrees with the cluster. An object the record lists that someone else
// took since (its marks name no release) is never deleted.
func TestAccHelmReleaseAccountsForObjectsHelmAdded(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "counted"
	config := releaseConfig(t, ns, name, `set = [{ name = "extra", value = "false" }, { name = "keep", value = "false" }]`)
	extraKey := "core/ConfigMap/" + ns + "/" + name + "-extra"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					helmCLI(t, "upgrade", name, chartPath(t, "lifecycle"), "-n", ns, "--reuse-values", "--set", "extra=true")
					if err := present(t, configMaps, ns, name+"-extra", true)(); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionUpdate),
					planFunc(func(r plancheck.CheckPlanRequest) error {
						for _, rc := range r.Plan.ResourceChanges {
							before, _ := rc.Change.Before.(map[string]any)
							after, _ := rc.Change.After.(map[string]any)
							was, _ := before["objects"].(map[string]any)
							now, _ := after["objects"].(map[string]any)
							if _, ok := was[extraKey]; !ok {
								return fmt.Errorf("the refresh should put %s, which helm added, in objects: %v", extraKey, keysOf(was))
							}
							if _, ok := now[extraKey]; ok {
								return fmt.Errorf("the plan should name %s's deletion", extraKey)
							}
						}
						return nil
					}),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					present(t, configMaps, ns, name+"-extra", false),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(3)),
					acctest.ClusterCheck(func() error {
						if out := helmCLI(t, "get", "manifest", name, "-n", ns); strings.Contains(out, name+"-extra") {
							return fmt.Errorf("helm get manifest still lists %s-extra:\n%s", name, out)
						}
						return nil
					}),
				},
			},
			{Config: config, PlanOnly: true},
		},
	})
}

// planFunc is a plan check written as a function.
type planFunc func(plancheck.CheckPlanRequest) error

func (f planFunc) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	resp.Error = f(req)
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A release imported and destroyed before any apply (objects still empty) is
// uninstalled as helm uninstall would: every object its latest record lists
// is deleted, then the records; an object of the record that another owner
// took since stays.
func TestAccHelmReleaseDestroyAfterImportUninstallsTheRecord(t *testing.T) {
	t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
	ns := acctest.Namespace(t)
	name := "importgone"
	helmCLI(t, "install", name, chartPath(t, "lifecycle"), "-n", ns, "--set", "greeting=hi", "--set", "keep=false")
	// Someone takes the extra ConfigMap away from the release.
	acctest.PatchAs(t, "kubectl", configMaps, ns, name+"-extra",
		`{"metadata":{"annotations":{"meta.helm.sh/release-name":"other"}}}`)
	w := acctest.NewWorkdir(t)
	// The configuration renders no extra ConfigMap: the one the record lists
	// is another release's now, and nothing of this one asks for it.
	w.Write(strings.Replace(releaseThroughProvider(t, ns, name, ""), `{ name = "keep", value = "false" }`,
		`{ name = "keep", value = "false" }, { name = "extra", value = "false" }`, 1))
	if r := w.Run("import", "-input=false", "k8sconnect_helm_release.app", ns+"/"+name); r.Err != nil {
		t.Fatalf("import: %v\n%s", r.Err, r.Output)
	}
	if r := w.Run("destroy", "-auto-approve", "-input=false"); r.Err != nil {
		t.Fatalf("destroy: %v\n%s", r.Err, r.Output)
	}
	for _, gone := range []string{name + "-settings"} {
		acctest.MustNotExist(t, configMaps, ns, gone)
	}
	acctest.MustNotExist(t, deployments, ns, name+"-app")
	acctest.MustNotExist(t, secrets, ns, name+"-auth")
	acctest.MustGet(t, configMaps, ns, name+"-extra")
	// The pre-delete hook ran, succeeded and, by its policy, was deleted.
	// Its template sets no namespace, and helm's record keeps it so: it
	// runs in the release's namespace, as helm runs it. It once ran in
	// "default" and was left there (its delete went to a path without
	// it, and the 404 counted as done).
	acctest.MustNotExist(t, pods, ns, name+"-goodbye")
	acctest.MustNotExist(t, pods, "default", name+"-goodbye")
	if got := recordStatuses(t, ns, name); len(got) != 0 {
		t.Errorf("records left after destroy: %v", got)
	}
}

// A release installed by a tool that links Helm's library under a name of
// its own (Flux's helm-controller, here) is adopted as one the helm CLI
// installed: after the import's apply, the tool's field manager no longer
// holds the fields the chart sets, so one the chart drops later goes with
// it instead of lingering under the tool's name.
func TestAccHelmReleaseAdoptsFromAnyInstaller(t *testing.T) {
	t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
	ns := acctest.Namespace(t)
	name := "flux"
	helmCLI(t, "install", name, chartPath(t, "lifecycle"), "-n", ns, "--set", "greeting=hi", "--set", "keep=false")
	// What helm-controller's apply leaves: the same object, its marks and
	// data written under its own manager.
	acctest.ApplyAs(t, "helm-controller", configMaps, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s-settings
  namespace: %[2]s
  labels: {app.kubernetes.io/managed-by: Helm}
  annotations: {meta.helm.sh/release-name: %[1]s, meta.helm.sh/release-namespace: %[2]s}
data: {greeting: hi}
`, name, ns))
	config := fmt.Sprintf(`
import {
  to = k8sconnect_helm_release.app
  id = "%[1]s/%[2]s"
}
`, ns, name) + releaseConfig(t, ns, name, `set = [{ name = "greeting", value = "hi" }, { name = "keep", value = "false" }]`)
	letGo := acctest.ClusterCheck(func() error {
		cm := acctest.MustGet(t, configMaps, ns, name+"-settings")
		for _, e := range cm.GetManagedFields() {
			if (e.Manager == "helm-controller" || e.Manager == "helm") && e.FieldsV1 != nil &&
				strings.Contains(string(e.FieldsV1.GetRawBytes()), "f:greeting") {
				return fmt.Errorf("%s still holds data.greeting: %s", e.Manager, e.FieldsV1.GetRawBytes())
			}
		}
		return nil
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: config, ConfigStateChecks: []statecheck.StateCheck{letGo, configMapData(t, ns, name+"-settings", "greeting", "hi")}},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// A release whose CRD someone deleted (every custom resource of its kind
// went with it) is still destroyed: the objects of a kind the cluster no
// longer serves are gone, not a reason to fail, and the rest of the release
// and its records go.
func TestAccHelmReleaseDestroyAfterItsCRDWasDeleted(t *testing.T) {
	t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
	ns := acctest.Namespace(t)
	name := "crdgone"
	w := acctest.NewWorkdir(t)
	w.Write(releaseConfig(t, ns, name, `set = [{ name = "keep", value = "false" }]`))
	w.Cleanup()
	w.MustApply()
	acctest.MustGet(t, gadgetsOf(t), ns, name+"-gadget")
	if err := acctest.Dynamic(t).Resource(crds).Delete(context.Background(), "gadgets."+lifecycleGroup(t), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		_, err := acctest.Dynamic(t).Resource(crds).Get(context.Background(), "gadgets."+lifecycleGroup(t), metav1.GetOptions{})
		if err != nil {
			break // gone
		}
		if time.Now().After(deadline) {
			t.Fatal("the deleted CRD is still there after a minute")
		}
	}
	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy of a release whose CRD was deleted: %v\n%s", r.Err, r.Output)
	}
	acctest.MustNotExist(t, configMaps, ns, name+"-settings")
	acctest.MustNotExist(t, deployments, ns, name+"-app")
	if got := recordStatuses(t, ns, name); len(got) != 0 {
		t.Errorf("records left after destroy: %v", got)
	}
}
