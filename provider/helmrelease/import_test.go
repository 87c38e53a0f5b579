package helmrelease_test

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// helmCLI runs the pinned helm against the shared cluster and returns what it printed.
func helmCLI(t *testing.T, args ...string) string {
	t.Helper()
	return helmCLIOf(t, toolchain.Helm, args...)
}

// helmCLIOf runs cli (toolchain.Helm, or toolchain.Helm3) against the shared
// cluster and returns what it printed.
func helmCLIOf(t *testing.T, cli string, args ...string) string {
	t.Helper()
	out, err := helmRun(t, cli, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", cli, strings.Join(args, " "), err, out)
	}
	return out
}

// helmRun runs cli as helmCLIOf does and returns what it printed and how it
// exited, for a command that may fail.
func helmRun(t *testing.T, cli string, args ...string) (string, error) {
	t.Helper()
	bin, err := toolchain.Built(context.Background(), cli)
	if err != nil {
		t.Fatal(err)
	}
	cluster := localcluster.Shared(t)
	cmd := exec.Command(bin, append(args, "--kubeconfig", cluster.KubeconfigPath, "--kube-context", localcluster.TokenContext)...)
	cmd.Env = append(cmd.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// A release made by `helm install` of Helm 4 (server-side and client-side
// apply) or of Helm 3 (client-side: it has no other) is imported and taken
// over in place: the same UIDs, the next revision in the same history,
// Helm's field manager no longer holding the fields the chart sets, and a
// clean plan after. The release stays the CLI's that made it: its helm
// history lists both revisions. Helm 3 reads records k8sconnect writes in
// Helm 4's format, so for it the release goes on: a change of ours, then a
// rollback by Helm 3 to its own revision, which the next plan shows as drift
// and the apply after it reverts.
func TestAccHelmReleaseAdoptsAHelmInstall(t *testing.T) {
	for _, c := range []struct {
		name  string
		cli   string
		major string // what `helm version --short` starts with
		flags []string
	}{
		{"helm4/server-side=true", toolchain.Helm, "v4.", []string{"--server-side=true"}},
		{"helm4/server-side=false", toolchain.Helm, "v4.", []string{"--server-side=false"}},
		{"helm3", toolchain.Helm3, "v3.", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
			ns := acctest.Namespace(t)
			name := "adopt"
			helm := func(args ...string) string { return helmCLIOf(t, c.cli, args...) }
			if v := helm("version", "--short"); !strings.HasPrefix(v, c.major) {
				t.Fatalf("%s is helm %s, want %s", c.cli, strings.TrimSpace(v), c.major)
			}
			helm(append([]string{"install", name, chartPath(t, "lifecycle"), "-n", ns, "--set", "greeting=hi",
				"--set", "keep=false"}, c.flags...)...)
			uid := acctest.UID(t, configMaps, ns, name+"-settings")
			appUID := acctest.UID(t, deployments, ns, name+"-app")
			config := fmt.Sprintf(`
import {
  to = k8sconnect_helm_release.app
  id = "%[1]s/%[2]s"
}
`, ns, name) + releaseConfig(t, ns, name, `set = [{ name = "greeting", value = "hi" }, { name = "keep", value = "false" }]`)
			sameUIDs := acctest.ClusterCheck(func() error {
				if got := acctest.UID(t, configMaps, ns, name+"-settings"); got != uid {
					return fmt.Errorf("the ConfigMap was replaced: UID %s -> %s", uid, got)
				}
				if got := acctest.UID(t, deployments, ns, name+"-app"); got != appUID {
					return fmt.Errorf("the Deployment was replaced: UID %s -> %s", appUID, got)
				}
				return nil
			})
			helmLetGo := acctest.ClusterCheck(func() error {
				cm := acctest.MustGet(t, configMaps, ns, name+"-settings")
				for _, e := range cm.GetManagedFields() {
					if e.Manager == "helm" && e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.GetRawBytes()), "f:greeting") {
						return fmt.Errorf("helm's field manager still holds data.greeting: %s", e.FieldsV1.GetRawBytes())
					}
				}
				if !slices.Contains(acctest.Managers(cm), "k8sconnect") {
					return fmt.Errorf("k8sconnect does not manage the ConfigMap: %v", acctest.Managers(cm))
				}
				return nil
			})
			steps := []resource.TestStep{
				{
					Config: config,
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionUpdate),
					}},
					ConfigStateChecks: []statecheck.StateCheck{
						sameUIDs, helmLetGo,
						statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
						records(t, ns, name, map[string]string{"v1": "superseded", "v2": "deployed"}),
						configMapData(t, ns, name+"-settings", "greeting", "hi"),
						acctest.ClusterCheck(func() error {
							h := helm("history", name, "-n", ns)
							if !strings.Contains(h, "Upgrade complete") || strings.Count(strings.TrimSpace(h), "\n") != 2 {
								return fmt.Errorf("helm history after the adoption:\n%s", h)
							}
							return nil
						}),
					},
				},
				{
					Config:           config,
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				},
			}
			if c.cli == toolchain.Helm3 {
				steps = append(steps, helm3GoesOn(t, helm, ns, name, config, helmLetGo)...)
			}
			resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: acctest.Factories(), Steps: steps})
		})
	}
}

// helm3GoesOn are the steps after the adoption of a release Helm 3 installed
// (revision 1 Helm 3's, 2 ours): a change of ours, revision 3; then Helm 3
// rolls back to its revision 1, writing 4 from the records k8sconnect wrote,
// and the plan after shows the rollback's greeting as drift, which the apply
// reverts in 5, taking the field back from Helm's manager (helmLetGo).
// config is the adoption's configuration, greeting=hi.
func helm3GoesOn(t *testing.T, helm func(...string) string, ns, name, config string, helmLetGo statecheck.StateCheck) []resource.TestStep {
	changed := strings.Replace(config, `value = "hi"`, `value = "bonjour"`, 1)
	key := "core/ConfigMap/" + ns + "/" + name + "-settings"
	return []resource.TestStep{
		{
			Config: changed,
			ConfigStateChecks: []statecheck.StateCheck{
				configMapData(t, ns, name+"-settings", "greeting", "bonjour"),
				statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(3)),
			},
		},
		{
			PreConfig: func() {
				helm("rollback", name, "1", "-n", ns)
				if err := configMapData(t, ns, name+"-settings", "greeting", "hi")(); err != nil {
					t.Fatalf("after helm rollback %s 1: %v", name, err)
				}
			},
			Config: changed,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("objects").AtMapKey(key).AtMapKey("data.greeting"),
					knownvalue.StringExact("bonjour")),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				configMapData(t, ns, name+"-settings", "greeting", "bonjour"), helmLetGo,
				statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(5)),
				records(t, ns, name, map[string]string{"v1": "superseded", "v2": "superseded", "v3": "superseded",
					"v4": "superseded", "v5": "deployed"}),
				acctest.ClusterCheck(func() error {
					h := helm("history", name, "-n", ns)
					if !strings.Contains(h, "Rollback to 1") || strings.Count(strings.TrimSpace(h), "\n") != 5 {
						return fmt.Errorf("helm history after the rollback and our apply:\n%s", h)
					}
					return nil
				}),
			},
		},
	}
}

// A release imported through the provider block's cluster_connection (the id
// names no context) records no connection of its own, and is read and applied
// through the provider's: the plan imports it, the apply takes it over in
// place, and the next plan is empty. Until this test such an import failed
// every time with a Value Conversion Error, as k8sconnect_object's once did:
// both now record the connection the one same way (connection.Imported).
func TestAccHelmReleaseImportsThroughTheProviderBlock(t *testing.T) {
	t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
	ns := acctest.Namespace(t)
	name := "viaprovider"
	helmCLI(t, "install", name, chartPath(t, "lifecycle"), "-n", ns, "--set", "greeting=hi", "--set", "keep=false")
	uid := acctest.UID(t, configMaps, ns, name+"-settings")

	w := acctest.NewWorkdir(t)
	w.Write(releaseThroughProvider(t, ns, name, fmt.Sprintf(`
import {
  to = k8sconnect_helm_release.app
  id = "%s/%s"
}
`, ns, name)))
	w.Cleanup()

	if plan := w.Plan(); plan.Err != nil || len(plan.Errors()) > 0 {
		t.Fatalf("%s plan of the import failed: %v\n%s", acctest.Engine(), plan.Err, plan.Output)
	}
	w.MustApply()
	if got := acctest.UID(t, configMaps, ns, name+"-settings"); got != uid {
		t.Errorf("the ConfigMap was replaced: UID %s -> %s", uid, got)
	}
	if got := w.StateAttribute("k8sconnect_helm_release.app", "revision"); got != "2" {
		t.Errorf("revision %s after the import's apply, want 2", got)
	}
	// Null reads as "" (the release is in state: its revision is).
	if got := w.StateAttribute("k8sconnect_helm_release.app", "cluster_connection"); got != "" {
		t.Errorf("the imported release records a connection of its own: %s", got)
	}
	if err := configMapData(t, ns, name+"-settings", "greeting", "hi")(); err != nil {
		t.Error(err)
	}
	w.MustPlanNoChanges()
}
