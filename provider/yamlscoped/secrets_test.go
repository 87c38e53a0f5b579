package yamlscoped_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// A bundle read from a file holds a Secret. k8sconnect_yaml_scoped and
// k8sconnect_yaml_split hand it out only in sensitive, keyed in
// sensitive_keys, never in the plain maps a for_each prints; applied by
// yaml_body_wo it reaches the cluster, and its values appear in no plan or
// apply output and nowhere in state but the data sources' sensitive maps.
// A new value in the file is planned without showing it.
func TestAccYAMLDataSources_secretsKeptApart(t *testing.T) {
	c := localcluster.Shared(t)
	ns := acctest.Name("scopedsec")
	first, second := acctest.NewSecretValue("bundlepw"), acctest.NewSecretValue("bundlepw")
	all := []acctest.SecretValue{first, second}
	w := acctest.NewWorkdir(t)
	bundle := func(pw acctest.SecretValue) {
		t.Helper()
		text := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: db, namespace: %[1]s}
type: Opaque
data: {password: %[2]s}
stringData: {user: %[3]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %[1]s}
data: {mode: fast}
---
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
`, ns, pw.Base64(), pw.Plain)
		if err := os.WriteFile(filepath.Join(w.Dir(), "bundle.yaml"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bundle(first)
	w.Write(fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %q }
}

data "k8sconnect_yaml_scoped" "bundle" {
  pattern = "${path.module}/bundle.yaml"
}

data "k8sconnect_yaml_split" "bundle" {
  pattern = "${path.module}/bundle.yaml"
}

resource "k8sconnect_object" "cluster_scoped" {
  for_each  = data.k8sconnect_yaml_scoped.bundle.cluster_scoped
  yaml_body = each.value
}

resource "k8sconnect_object" "namespaced" {
  for_each   = data.k8sconnect_yaml_scoped.bundle.namespaced
  yaml_body  = each.value
  depends_on = [k8sconnect_object.cluster_scoped]
}

resource "k8sconnect_object" "secrets" {
  for_each     = toset(data.k8sconnect_yaml_scoped.bundle.sensitive_keys)
  yaml_body_wo = data.k8sconnect_yaml_scoped.bundle.sensitive[each.key]
  depends_on   = [k8sconnect_object.cluster_scoped]
}

output "split_keys" {
  value = data.k8sconnect_yaml_split.bundle.sensitive_keys
}

output "split_manifests" {
  value = keys(data.k8sconnect_yaml_split.bundle.manifests)
}

output "scoped_namespaced" {
  value = keys(data.k8sconnect_yaml_scoped.bundle.namespaced)
}
`, c.KubeconfigPath))
	w.Cleanup()

	human := func(what string, cmd ...string) string {
		t.Helper()
		r := w.Human(cmd...)
		acctest.ExpectAbsent(t, what+" output", r.Output, all...)
		return r.Output
	}
	human("plan", "plan")
	human("apply", "apply", "-auto-approve")
	live, _ := json.Marshal(acctest.MustGet(t, secretsGVR, ns, "db").Object)
	acctest.ExpectPresent(t, "the Secret in the cluster", string(live), first.Base64())

	secretKey := "core/Secret/" + ns + "/db"
	out := w.Run("output", "-json")
	if out.Err != nil {
		t.Fatalf("output: %v\n%s", out.Err, out.Output)
	}
	outputs := out.Output
	acctest.ExpectAbsent(t, "output -json", outputs, all...)
	var outs map[string]struct {
		Value []string `json:"value"`
	}
	if err := json.Unmarshal([]byte(outputs[strings.Index(outputs, "{"):]), &outs); err != nil {
		t.Fatalf("outputs: %v\n%s", err, outputs)
	}
	if got := outs["split_keys"].Value; len(got) != 1 || got[0] != secretKey {
		t.Errorf("yaml_split sensitive_keys = %v, want [%s]", got, secretKey)
	}
	for _, o := range []string{"split_manifests", "scoped_namespaced"} {
		if strings.Contains(strings.Join(outs[o].Value, " "), "Secret") {
			t.Errorf("%s still lists the Secret: %v", o, outs[o].Value)
		}
	}
	if got := outs["scoped_namespaced"].Value; len(got) != 1 {
		t.Errorf("namespaced should hold the ConfigMap alone: %v", got)
	}

	outside, inSensitive, _ := w.StateParts("sensitive")
	acctest.ExpectPresent(t, "the data sources' sensitive maps", inSensitive, first.Base64())
	acctest.ExpectAbsent(t, "state outside the sensitive maps", outside, all...)
	acctest.ExpectPresent(t, "state outside the sensitive maps", outside, "core/ConfigMap/"+ns+"/settings")
	w.MustPlanNoChanges()

	// A new value in the file: planned as a changed hash, shown nowhere.
	bundle(second)
	r := w.Plan()
	if _, change, _ := r.Changes(); r.Err != nil || change != 1 {
		t.Fatalf("a new value in the bundle should plan 1 update, got %d (%v)\n%s", change, r.Err, r.Output)
	}
	acctest.ExpectAbsent(t, "plan -json of the new value", r.Output, all...)
	human("plan of the new value", "plan")
	human("apply of the new value", "apply", "-auto-approve")
	live, _ = json.Marshal(acctest.MustGet(t, secretsGVR, ns, "db").Object)
	acctest.ExpectPresent(t, "the Secret in the cluster", string(live), second.Base64())
	outside, _, _ = w.StateParts("sensitive")
	acctest.ExpectAbsent(t, "state outside the sensitive maps", outside, all...)
	w.MustPlanNoChanges()
}

// The secrets guide's recipe works on a bundle without a Secret, as most
// vendor bundles are: sensitive_keys is an empty list, not null, so a
// for_each over it makes no resource instead of failing the plan with
// "Invalid for_each argument"; the rest of the bundle applies.
func TestAccYAMLDataSources_recipeOnABundleWithoutSecrets(t *testing.T) {
	c := localcluster.Shared(t)
	ns := acctest.Name("nosecrets")
	w := acctest.NewWorkdir(t)
	text := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %[1]s}\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %[1]s}\ndata: {mode: fast}\n", ns)
	if err := os.WriteFile(filepath.Join(w.Dir(), "bundle.yaml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	w.Write(fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %q }
}

data "k8sconnect_yaml_scoped" "bundle" {
  pattern = "${path.module}/bundle.yaml"
}

data "k8sconnect_yaml_split" "bundle" {
  pattern = "${path.module}/bundle.yaml"
}

resource "k8sconnect_object" "cluster_scoped" {
  for_each  = data.k8sconnect_yaml_scoped.bundle.cluster_scoped
  yaml_body = each.value
}

resource "k8sconnect_object" "namespaced" {
  for_each   = data.k8sconnect_yaml_scoped.bundle.namespaced
  yaml_body  = each.value
  depends_on = [k8sconnect_object.cluster_scoped]
}

resource "k8sconnect_object" "secrets" {
  for_each     = toset(data.k8sconnect_yaml_scoped.bundle.sensitive_keys)
  yaml_body_wo = data.k8sconnect_yaml_scoped.bundle.sensitive[each.key]
  depends_on   = [k8sconnect_object.cluster_scoped]
}

resource "k8sconnect_object" "split_secrets" {
  for_each     = toset(data.k8sconnect_yaml_split.bundle.sensitive_keys)
  yaml_body_wo = data.k8sconnect_yaml_split.bundle.sensitive[each.key]
}

output "keys" {
  value = [data.k8sconnect_yaml_scoped.bundle.sensitive_keys, data.k8sconnect_yaml_split.bundle.sensitive_keys]
}
`, c.KubeconfigPath))
	w.Cleanup()
	w.MustApply()
	acctest.MustGet(t, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, ns, "settings")
	out := w.Run("output", "-json", "keys")
	if out.Err != nil || !strings.Contains(out.Output, "[[],[]]") {
		t.Errorf("sensitive_keys of yaml_scoped and yaml_split should both be [], got %v:\n%s", out.Err, out.Output)
	}
	w.MustPlanNoChanges()
}

// A bundle given as content, read after the namespace it goes into
// (depends_on): while that namespace is being created, Terraform and OpenTofu
// defer the read to the apply and print the data source's arguments in the
// plan. content is sensitive, so the Secret in it is in no plan or apply
// output, and still reaches the cluster.
func TestAccYAMLDataSources_contentHiddenWhenTheReadIsDeferred(t *testing.T) {
	ns := acctest.Name("deferredsec")
	password := acctest.NewSecretValue("deferredpw")
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "namespace" {
  yaml_body = <<-EOT
    apiVersion: v1
    kind: Namespace
    metadata: {name: %[1]s}
  EOT
  %[3]s
}

data "k8sconnect_yaml_split" "bundle" {
  content    = <<-EOT
    apiVersion: v1
    kind: Secret
    metadata: {name: db, namespace: %[1]s}
    stringData: {password: %[2]s}
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings, namespace: %[1]s}
    data: {mode: fast}
  EOT
  depends_on = [k8sconnect_object.namespace]
}

resource "k8sconnect_object" "secret" {
  yaml_body_wo = data.k8sconnect_yaml_split.bundle.sensitive["core/Secret/%[1]s/db"]
  %[3]s
}
`, ns, password.Plain, acctest.Connection(t)))
	w.Cleanup()

	run := func(what string, cmd ...string) string {
		t.Helper()
		r := w.Human(cmd...)
		acctest.ExpectAbsent(t, what+" output", r.Output, password)
		return r.Output
	}
	plan := run("plan", "plan")
	// The read is deferred, and the plan prints the arguments it has.
	for _, want := range []string{"data.k8sconnect_yaml_split.bundle will be read during apply", "content = (sensitive value)"} {
		if !strings.Contains(strings.Join(strings.Fields(plan), " "), want) {
			t.Errorf("the plan does not say %q:\n%.3000s", want, plan)
		}
	}
	run("apply", "apply", "-auto-approve")
	show := w.Run("show", "-no-color")
	if show.Err != nil {
		t.Fatalf("show: %v\n%s", show.Err, show.Output)
	}
	acctest.ExpectAbsent(t, "show output", show.Output, password)
	live, _ := json.Marshal(acctest.MustGet(t, secretsGVR, ns, "db").Object)
	acctest.ExpectPresent(t, "the Secret in the cluster", string(live), password.Base64())
}
