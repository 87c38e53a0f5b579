package yamlscoped_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// The upgrade recipe of the CHANGELOG and docs/guides/secrets.md, as printed:
// a configuration that applied a bundle's Secret through for_each over
// namespaced (where the data sources put Secrets before they moved to
// sensitive) takes the Secret out of state with state rm and imports it into
// k8sconnect_object.secrets, over sensitive_keys, with yaml_body_wo. The plan
// destroys nothing, the Secret keeps its UID, its value is printed by no run,
// the state holds its body nowhere after the apply, and the next plan is
// empty. (A moved block would print the old yaml_body, value and all, as it
// goes to null: the reason the recipe imports.) Before the recipe, the plan
// of the upgraded configuration, which would destroy the Secret, warns.
func TestAccYAMLDataSources_secretMigrationRecipe(t *testing.T) {
	c := localcluster.Shared(t)
	ns := acctest.Name("migratesec")
	pw := acctest.NewSecretValue("migratepw")
	w := acctest.NewWorkdir(t)
	if err := os.MkdirAll(filepath.Join(w.Dir(), "app"), 0o700); err != nil {
		t.Fatal(err)
	}
	namespace := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns)
	configMap := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {mode: fast}\n", ns)
	secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: %s}\ntype: Opaque\nstringData: {password: %s}\n", ns, pw.Plain)
	bundle := strings.Join([]string{namespace, configMap, secret}, "---\n")
	if err := os.WriteFile(filepath.Join(w.Dir(), "app", "bundle.yaml"), []byte(bundle), 0o600); err != nil {
		t.Fatal(err)
	}
	secretKey := "core/Secret/" + ns + "/db"
	common := fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %q }
}

data "k8sconnect_yaml_scoped" "app" {
  pattern = "${path.module}/app/*.yaml"
}

resource "k8sconnect_object" "cluster_scoped" {
  for_each  = data.k8sconnect_yaml_scoped.app.cluster_scoped
  yaml_body = each.value
}
`, c.KubeconfigPath)

	// Before the upgrade: namespaced held the Secret too, under the key
	// sensitive holds it by now.
	w.Write(common + fmt.Sprintf(`
resource "k8sconnect_object" "namespaced" {
  for_each   = merge(data.k8sconnect_yaml_scoped.app.namespaced, { %q = %q })
  yaml_body  = each.value
  depends_on = [k8sconnect_object.cluster_scoped]
}
`, secretKey, secret))
	w.Cleanup()
	w.MustApply()
	uid := acctest.UID(t, secretsGVR, ns, "db")
	old := fmt.Sprintf("k8sconnect_object.namespaced[%q]", secretKey)
	if body := w.StateAttribute(old, "yaml_body"); !strings.Contains(body, pw.Plain) {
		t.Fatalf("the old configuration should hold the Secret's body in state, as it did before the upgrade: %s", body)
	}

	// Upgraded without reading the CHANGELOG: namespaced no longer holds the
	// Secret, so the plan destroys it, and says why and what keeps it.
	namespaced := `
resource "k8sconnect_object" "namespaced" {
  for_each   = data.k8sconnect_yaml_scoped.app.namespaced
  yaml_body  = each.value
  depends_on = [k8sconnect_object.cluster_scoped]
}
`
	w.Write(common + namespaced)
	unaware := w.Plan()
	if add, change, remove := unaware.Changes(); unaware.Err != nil || add != 0 || change != 0 || remove != 1 {
		t.Fatalf("without the recipe the plan should destroy the Secret alone, got +%d ~%d -%d (%v)\n%s", add, change, remove, unaware.Err, unaware.Output)
	}
	var warned []string
	for _, d := range unaware.Warnings() {
		if d.Summary == "A Secret given by yaml_body is destroyed" {
			warned = append(warned, d.Detail)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "Secret "+ns+"/db") || !strings.Contains(warned[0], "sensitive_keys") ||
		!strings.Contains(warned[0], "state rm") {
		t.Errorf("the destroy of the bundle's Secret should warn once, naming it, sensitive_keys and the recipe: %q", warned)
	}
	acctest.ExpectAbsent(t, "the warning", strings.Join(warned, "\n"), pw)

	// The recipe, as printed, with this bundle's key.
	human := func(what string, cmd ...string) {
		t.Helper()
		acctest.ExpectAbsent(t, what+" output", w.Human(cmd...).Output, pw)
	}
	rm := w.Run("state", "rm", old)
	if rm.Err != nil {
		t.Fatalf("state rm: %v\n%s", rm.Err, rm.Output)
	}
	acctest.ExpectAbsent(t, "state rm output", rm.Output, pw)
	w.Write(common + namespaced + fmt.Sprintf(`
resource "k8sconnect_object" "secrets" {
  for_each     = toset(data.k8sconnect_yaml_scoped.app.sensitive_keys)
  yaml_body_wo = data.k8sconnect_yaml_scoped.app.sensitive[each.key]
}

import {
  to = k8sconnect_object.secrets[%q]
  id = "v1/Secret/%s/db"
}
`, secretKey, ns))
	plan := w.Plan()
	// One update: the imported Secret, whose yaml_body (placeholders in
	// place of its values) goes to null for yaml_body_wo.
	if add, change, remove := plan.Changes(); plan.Err != nil || add != 0 || change != 1 || remove != 0 {
		t.Fatalf("the recipe should import and update the Secret alone, got +%d ~%d -%d (%v)\n%s", add, change, remove, plan.Err, plan.Output)
	}
	acctest.ExpectAbsent(t, "plan -json of the recipe", plan.Output, pw)
	human("plan of the recipe", "plan")
	human("apply of the recipe", "apply", "-auto-approve")
	if got := acctest.UID(t, secretsGVR, ns, "db"); got != uid {
		t.Errorf("the Secret was replaced: UID %s, was %s", got, uid)
	}
	live, _ := json.Marshal(acctest.MustGet(t, secretsGVR, ns, "db").Object)
	acctest.ExpectPresent(t, "the Secret in the cluster", string(live), pw.Base64())
	if body := w.StateAttribute(fmt.Sprintf("k8sconnect_object.secrets[%q]", secretKey), "yaml_body"); body != "" && body != "null" {
		t.Errorf("the imported Secret has a yaml_body in state: %s", body)
	}
	outside, _, private := w.StateParts("sensitive")
	acctest.ExpectAbsent(t, "state outside the data source's sensitive map", outside, pw)
	acctest.ExpectAbsent(t, "decoded private state", private, pw)
	w.MustPlanNoChanges()
}
