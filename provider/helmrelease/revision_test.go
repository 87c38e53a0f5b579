package helmrelease_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// revisionChart writes, into dir, a chart whose templates print what helm
// tells them of the revision, as charts that gate one-time work do: a
// ConfigMap with .Release.Revision, .Release.IsInstall and .Release.IsUpgrade,
// and a post-install/post-upgrade hook ConfigMap named for the revision it
// ran in. flagsExtra is more data of the ConfigMap, hookMark the hook's.
func revisionChart(t *testing.T, dir, flagsExtra, hookMark string) {
	t.Helper()
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: revisions\nversion: 1.0.0\n",
		"templates/flags.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-flags
data:
  revision: {{ .Release.Revision | quote }}
  install: {{ .Release.IsInstall | quote }}
  upgrade: {{ .Release.IsUpgrade | quote }}
` + flagsExtra,
		"templates/hook.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-hook-r{{ .Release.Revision }}
  annotations:
    helm.sh/hook: post-install,post-upgrade
data:
  install: {{ .Release.IsInstall | quote }}
  upgrade: {{ .Release.IsUpgrade | quote }}
  mark: ` + hookMark + "\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// Every revision is rendered as helm renders it, whatever changed: a local
// chart edited in place (same version, same values) and a change to a hook
// alone are upgrades, which templates and hooks see as revision N with
// IsUpgrade, and whose hooks run. Drift alone (an object edited by hand) is a
// repair: the apply puts the object back as the last revision rendered it
// and runs no hook.
func TestAccHelmReleaseRendersEveryRevisionAsHelm(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "revs"
	dir := t.TempDir()
	revisionChart(t, dir, "", "A")
	config := fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  timeout   = "60s"
  %s
}
`, name, ns, dir, acctest.Connection(t))
	flags := name + "-flags"
	var hookUID string
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionUpdate),
	}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
					configMapData(t, ns, flags, "revision", "1"),
					configMapData(t, ns, flags, "install", "true"),
					configMapData(t, ns, name+"-hook-r1", "install", "true"),
				},
			},
			{
				// The chart's directory edited in place: same version, same values.
				PreConfig:        func() { revisionChart(t, dir, "  edited: \"yes\"\n", "A") },
				Config:           config,
				ConfigPlanChecks: update,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
					configMapData(t, ns, flags, "edited", "yes"),
					configMapData(t, ns, flags, "revision", "2"),
					configMapData(t, ns, flags, "upgrade", "true"),
					configMapData(t, ns, flags, "install", "false"),
					configMapData(t, ns, name+"-hook-r2", "upgrade", "true"),
					records(t, ns, name, map[string]string{"v1": "superseded", "v2": "deployed"}),
				},
			},
			{
				// Only the hook changed: nothing of the release's objects.
				PreConfig:        func() { revisionChart(t, dir, "  edited: \"yes\"\n", "B") },
				Config:           config,
				ConfigPlanChecks: update,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(3)),
					configMapData(t, ns, name+"-hook-r3", "mark", "B"),
					configMapData(t, ns, flags, "revision", "3"),
					acctest.ClusterCheck(func() error { hookUID = acctest.UID(t, configMaps, ns, name+"-hook-r3"); return nil }),
				},
			},
			{
				// Drift alone: a repair, rendered as revision 3 was, no hook.
				PreConfig: func() {
					acctest.PatchAs(t, "kubectl-edit", configMaps, ns, flags, `{"data":{"revision":"tampered"}}`)
				},
				Config:           config,
				ConfigPlanChecks: update,
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, flags, "revision", "3"),
					configMapData(t, ns, flags, "upgrade", "true"),
					present(t, configMaps, ns, name+"-hook-r4", false),
					// A revision of its own, as helm rollback writes one, so that helm's
					// history says when the release was put back.
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(4)),
					acctest.ClusterCheck(func() error {
						out := helmCLI(t, "history", name, "-n", ns)
						if !strings.Contains(out, "Repair complete: objects put back as revision 3 left them") {
							return fmt.Errorf("helm history should name the repair:\n%s", out)
						}
						return nil
					}),
					acctest.ClusterCheck(func() error {
						if uid := acctest.UID(t, configMaps, ns, name+"-hook-r3"); uid != hookUID {
							return fmt.Errorf("the repair ran the hook again: hook-r3's UID %s, was %s", uid, hookUID)
						}
						return nil
					}),
				},
			},
			{Config: config, PlanOnly: true},
		},
	})
}
