package manifestset_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
)

func TestMain(m *testing.M) { acctest.Main(m) }

var (
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	crds        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

const (
	labelPartOf = "applyset.kubernetes.io/part-of"
	labelID     = "applyset.kubernetes.io/id"
)

// setConfig is a k8sconnect_manifest_set named name with the given source
// attribute (yaml_body = ..., path = ...) and extra arguments.
func setConfig(t *testing.T, name, source, extra string) string {
	return fmt.Sprintf(`
resource "k8sconnect_manifest_set" %q {
  %s
  %s
  %s
}
`, name, source, extra, acctest.Connection(t))
}

func yamlBody(docs ...string) string {
	return fmt.Sprintf("yaml_body = %q", strings.Join(docs, "\n---\n"))
}

func configMap(ns, name, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: %s}\n", name, ns, value)
}

// A set's lifecycle as a user lives it: a bundle with a Namespace, a CRD and
// its custom resource, a Deployment and ConfigMaps is created in one apply
// (each object carries the part-of label, the parent Secret kubectl's marks);
// the next plan is quiet; a changed value is an update in place (same UIDs);
// a drifted owned field shows in the plan and is put back; an object taken
// out of the source is pruned; destroy deletes every object and the parent.
func TestAccManifestSet_lifecycle(t *testing.T) {
	t.Parallel()
	ns := acctest.NamespaceToMake(t)
	group := strings.ToLower(acctest.Name("set")) + ".k8sconnect.test"
	widget := fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata: {name: one, namespace: %s}\nspec: {size: 3}\n", group, ns)
	deployment := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`, ns)
	namespace := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns)
	docs := func(greeting string, extra bool) string {
		d := []string{widget, deployment, configMap(ns, "settings", greeting), namespace, fixtures.CRD(group, "Widget", "size: {type: integer}")}
		if extra {
			d = append(d, configMap(ns, "extra", "x"))
		}
		return yamlBody(d...)
	}
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "bundle", docs("hello", true), fmt.Sprintf("namespace = %q", ns)))
	w.Cleanup()
	t.Cleanup(func() {
		_ = acctest.Dynamic(t).Resource(crds).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
	})
	r := w.Plan()
	if add, _, _ := r.Changes(); r.Err != nil || add != 1 {
		t.Fatalf("the first plan should create the set: +%d (%v)\n%s", add, r.Err, r.Output)
	}
	w.MustApply()

	parentID := w.StateAttribute("k8sconnect_manifest_set.bundle", "id")
	setID := w.StateAttribute("k8sconnect_manifest_set.bundle", "applyset_id")
	pns, pname, _ := strings.Cut(parentID, "/")
	parent := acctest.MustGet(t, secrets, pns, pname)
	if got := parent.GetLabels()[labelID]; got != setID || !strings.HasPrefix(setID, "applyset-") {
		t.Errorf("the parent's id label is %q, applyset_id %q", got, setID)
	}
	ann := parent.GetAnnotations()
	if got, want := ann["applyset.kubernetes.io/contains-group-kinds"], "ConfigMap,CustomResourceDefinition.apiextensions.k8s.io,Deployment.apps,Namespace,Widget."+group; got != want {
		t.Errorf("contains-group-kinds = %q, want %q", got, want)
	}
	if got := ann["applyset.kubernetes.io/tooling"]; !strings.HasPrefix(got, "k8sconnect/") {
		t.Errorf("tooling = %q, want k8sconnect/<version>", got)
	}
	for _, o := range []struct {
		gvr      schema.GroupVersionResource
		ns, name string
	}{{configMaps, ns, "settings"}, {configMaps, ns, "extra"}, {deployments, ns, "web"}, {namespaces, "", ns},
		{crds, "", "widgets." + group}, {schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}, ns, "one"}} {
		if got := acctest.MustGet(t, o.gvr, o.ns, o.name).GetLabels()[labelPartOf]; got != setID {
			t.Errorf("%s %s/%s: part-of label %q, want %q", o.gvr.Resource, o.ns, o.name, got, setID)
		}
	}
	objects := w.StateAttribute("k8sconnect_manifest_set.bundle", "objects")
	for _, key := range []string{"core/ConfigMap/" + ns + "/settings", "apps/Deployment/" + ns + "/web", group + "/Widget/" + ns + "/one", "core/Namespace/" + ns} {
		if !strings.Contains(objects, key) {
			t.Errorf("objects lacks %s:\n%s", key, objects)
		}
	}
	w.MustPlanNoChanges()

	uid := acctest.UID(t, configMaps, ns, "settings")
	w.Write(setConfig(t, "bundle", docs("bonjour", true), fmt.Sprintf("namespace = %q", ns)))
	r = w.Plan()
	if _, change, _ := r.Changes(); r.Err != nil || change != 1 {
		t.Fatalf("a changed value should plan one update: ~%d (%v)\n%s", change, r.Err, r.Output)
	}
	w.MustApply()
	if got := acctest.MustGet(t, configMaps, ns, "settings").Object["data"].(map[string]any)["greeting"]; got != "bonjour" {
		t.Errorf("greeting = %v after the update", got)
	}
	if got := acctest.UID(t, configMaps, ns, "settings"); got != uid {
		t.Errorf("the ConfigMap was replaced (UID %s -> %s); an update is in place", uid, got)
	}

	acctest.PatchAs(t, "kubectl-edit", configMaps, ns, "settings", `{"data":{"greeting":"edited"}}`)
	r = w.Plan()
	if _, change, _ := r.Changes(); r.Err != nil || change != 1 || !strings.Contains(r.Output, "edited") {
		t.Fatalf("drift on an owned field should show in the plan: ~%d (%v)\n%s", change, r.Err, r.Output)
	}
	w.MustApply()
	if got := acctest.MustGet(t, configMaps, ns, "settings").Object["data"].(map[string]any)["greeting"]; got != "bonjour" {
		t.Errorf("greeting = %v after repairing drift", got)
	}

	extraUID := acctest.UID(t, configMaps, ns, "extra")
	w.Write(setConfig(t, "bundle", docs("bonjour", false), fmt.Sprintf("namespace = %q", ns)))
	w.MustApply()
	if obj, err := acctest.Get(t, configMaps, ns, "extra"); err != nil || obj != nil {
		t.Errorf("the ConfigMap taken out of the source (UID %s) should be pruned: %v, %v", extraUID, obj, err)
	}
	if got := acctest.MustGet(t, secrets, pns, pname).GetAnnotations()["applyset.kubernetes.io/contains-group-kinds"]; !strings.Contains(got, "ConfigMap") {
		t.Errorf("contains-group-kinds after pruning = %q", got)
	}
	w.MustPlanNoChanges()

	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy: %v\n%s", r.Err, r.Output)
	}
	acctest.MustNotExist(t, configMaps, ns, "settings")
	acctest.MustNotExist(t, deployments, ns, "web")
	acctest.MustNotExist(t, secrets, pns, pname)
}

// An object that exists and is not the set's is refused at plan, naming
// who holds it, and nothing of the set is applied; so is the same object
// declared in two sets (the second is refused).
func TestAccManifestSet_refusesWhatIsNotItsOwn(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	acctest.ApplyAs(t, "someone-else", configMaps, configMap(ns, "taken", "theirs"))
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "first", yamlBody(configMap(ns, "mine", "a"), configMap(ns, "taken", "ours")), ""))
	w.Cleanup()
	r := w.Apply()
	w.MustFail(r, "apply of a set one of whose objects exists and is someone else's")
	if !r.HasError("core/ConfigMap/"+ns+"/taken", "already exists and belongs to no set (made by someone-else)") {
		t.Errorf("the error should name the object and its holder:\n%s", r.Output)
	}
	acctest.MustNotExist(t, configMaps, ns, "mine")
	if got := acctest.MustGet(t, configMaps, ns, "taken").Object["data"].(map[string]any)["greeting"]; got != "theirs" {
		t.Errorf("the refused object was changed: greeting = %v", got)
	}

	w.Write(setConfig(t, "first", yamlBody(configMap(ns, "mine", "a")), ""))
	w.MustApply()
	other := acctest.NewWorkdir(t)
	other.Write(setConfig(t, "second", yamlBody(configMap(ns, "mine", "b"), configMap(ns, "theirs", "b")), ""))
	other.Cleanup()
	r = other.Apply()
	other.MustFail(r, "a second set declaring an object of the first")
	if !r.HasError("core/ConfigMap/"+ns+"/mine", "another ApplySet") {
		t.Errorf("the second set should be refused, naming the other ApplySet:\n%s", r.Output)
	}
	if got := acctest.MustGet(t, configMaps, ns, "mine").Object["data"].(map[string]any)["greeting"]; got != "a" {
		t.Errorf("the second set changed the first's object: greeting = %v", got)
	}
}

// prune = false leaves an object taken out of the source in the cluster,
// without the set's part-of label, and says so at plan.
func TestAccManifestSet_pruneFalseLetsGo(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "set", yamlBody(configMap(ns, "stays", "a"), configMap(ns, "leaves", "b")), "prune = false"))
	w.Cleanup()
	w.MustApply()
	uid := acctest.UID(t, configMaps, ns, "leaves")
	w.Write(setConfig(t, "set", yamlBody(configMap(ns, "stays", "a")), "prune = false"))
	r := w.Plan()
	var warned bool
	for _, d := range r.Warnings() {
		warned = warned || (d.Summary == "Object leaves the set and stays in the cluster" && strings.Contains(d.Detail, "core/ConfigMap/"+ns+"/leaves"))
	}
	if !warned {
		t.Errorf("the plan should warn that the object stays in the cluster, warns %v", r.Warnings())
	}
	w.MustApply()
	live := acctest.MustGet(t, configMaps, ns, "leaves")
	if string(live.GetUID()) != uid || live.GetLabels()[labelPartOf] != "" {
		t.Errorf("the object let go should stay (UID %s, now %s) without the part-of label (labels %v)", uid, live.GetUID(), live.GetLabels())
	}
	w.MustPlanNoChanges()
}

// A set read from a directory of files (recursive) keeps a Secret's data
// out of state and plan output: objects shows keyed hashes.
func TestAccManifestSet_directoryWithASecret(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	dir := t.TempDir()
	secret := acctest.NewSecretValue("pw")
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("app/settings.yaml", configMap(ns, "settings", "hi"))
	write("app/secret/auth.yml", fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: auth, namespace: %s}\nstringData: {password: %s}\n", ns, secret.Plain))
	write("README.md", "not a manifest")
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "files", fmt.Sprintf("path = %q\n  recursive = true", dir), ""))
	w.Cleanup()
	r := w.MustApply()
	if strings.Contains(r.Output, secret.Plain) {
		t.Error("the apply's output holds the Secret's value")
	}
	acctest.MustGet(t, secrets, ns, "auth")
	objects := w.StateAttribute("k8sconnect_manifest_set.files", "objects")
	if !strings.Contains(objects, "core/Secret/"+ns+"/auth") || !strings.Contains(objects, "core/ConfigMap/"+ns+"/settings") {
		t.Errorf("objects should hold both files' objects:\n%s", objects)
	}
	outside, _, private := w.StateParts()
	acctest.ExpectPresent(t, "state", outside, "core/Secret/"+ns+"/auth")
	for _, form := range []string{secret.Plain, secret.Base64()} {
		if strings.Contains(outside+private, form) {
			t.Errorf("state holds the Secret's value (%s form) in clear", map[bool]string{true: "plain", false: "base64"}[form == secret.Plain])
		}
	}
	w.MustPlanNoChanges()
}

// A Secret in yaml_body (wrapped in sensitive(), as users are told) is
// warned of once, at the plan that creates the body, in a warning that
// prints no source line; its value is in no output; the next plan is quiet.
func TestAccManifestSet_secretInYAMLBody(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	secret := acctest.NewSecretValue("pw")
	body := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: auth, namespace: %s}\nstringData: {password: %s}\n---\n%s",
		ns, secret.Plain, configMap(ns, "settings", "hi"))
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "set", fmt.Sprintf("yaml_body = sensitive(%q)", body), ""))
	w.Cleanup()
	r := w.Plan()
	var warned int
	for _, d := range r.Warnings() {
		if d.Summary == "A Secret in yaml_body is kept in state" {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("the plan should warn once of the Secret in yaml_body, warns %v", r.Warnings())
	}
	applied := w.MustApply()
	for _, out := range []string{r.Output, applied.Output, w.Human("plan").Output} {
		if strings.Contains(out, secret.Plain) || strings.Contains(out, secret.Base64()) {
			t.Error("an engine output holds the Secret's value")
		}
	}
	if got := acctest.MustGet(t, secrets, ns, "auth").Object["data"].(map[string]any)["password"]; got != secret.Base64() {
		t.Errorf("the Secret's password did not reach the cluster: %v", got)
	}
	r = w.Plan()
	if ws := r.Warnings(); len(ws) != 0 {
		t.Errorf("a plan that does not change yaml_body should not warn again, warns %v", ws)
	}
}

// A kustomization is built as kubectl kustomize builds it: its prefix and
// generated ConfigMap (with kustomize's hash suffix) are the set's objects.
// A set with two sources, or none, is refused at plan.
func TestAccManifestSet_kustomizationAndOneSource(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"kustomization.yaml": fmt.Sprintf("namespace: %s\nnamePrefix: shop-\nresources: [settings.yaml]\n"+
			"configMapGenerator:\n- name: generated\n  literals: [color=blue]\n", ns),
		"settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {greeting: hi}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "kust", fmt.Sprintf("kustomization = %q", dir), ""))
	w.Cleanup()
	w.MustApply()
	acctest.MustGet(t, configMaps, ns, "shop-settings")
	objects := w.StateAttribute("k8sconnect_manifest_set.kust", "objects")
	if !strings.Contains(objects, "core/ConfigMap/"+ns+"/shop-generated-") {
		t.Errorf("objects should hold the generated ConfigMap, with kustomize's hash suffix:\n%s", objects)
	}
	w.MustPlanNoChanges()

	for what, source := range map[string]string{
		"two sources": fmt.Sprintf("kustomization = %q\n  yaml_body = %q", dir, configMap(ns, "x", "y")),
		"no source":   "",
	} {
		bad := acctest.NewWorkdir(t)
		bad.Write(setConfig(t, "bad", source, ""))
		r := bad.Plan()
		bad.MustFail(r, what)
		if !r.HasError("yaml_body", "path", "kustomization") {
			t.Errorf("%s: the error should name the three sources:\n%s", what, r.Output)
		}
	}
}

// A value of the wrong type (YAML's unquoted true where a ConfigMap holds
// strings) is the server's verdict on the manifest: refused at plan, named
// as such and not as an unreachable cluster, and nothing is applied.
func TestAccManifestSet_valueOfTheWrongTypeIsRefused(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "set", yamlBody(configMap(ns, "fine", "hi"),
		fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typed, namespace: %s}\ndata: {enabled: true}\n", ns)), ""))
	r := w.Plan()
	w.MustFail(r, "a plan of a ConfigMap with a boolean value")
	var verdict bool
	for _, d := range r.Errors() {
		verdict = verdict || d.Summary == "Object of the set not accepted"
	}
	if !verdict || !r.HasError("core/ConfigMap/"+ns+"/typed", "expected string", "quote it in YAML") ||
		strings.Contains(r.Output, "did not answer as expected") {
		t.Errorf("the error should name the object and the remedy, not an unreachable cluster:\n%s", r.Output)
	}
	acctest.MustNotExist(t, configMaps, ns, "fine")
}

// An object of a set is the set's: a k8sconnect_object that declares it too
// is refused at plan, naming the ApplySet, and so is a k8sconnect_patch of
// it (the set would take its fields back at every apply); the set's object
// is left as the set applied it.
func TestAccManifestSet_declaredAlsoElsewhereIsRefused(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "set", yamlBody(configMap(ns, "shared", "set")), ""))
	w.Cleanup()
	w.MustApply()
	setID := w.StateAttribute("k8sconnect_manifest_set.set", "applyset_id")

	for what, config := range map[string]string{
		"a k8sconnect_object": fmt.Sprintf(`
resource "k8sconnect_object" "also" {
  yaml_body = %q
  %s
}
`, configMap(ns, "shared", "object"), acctest.Connection(t)),
		"a k8sconnect_patch": fmt.Sprintf(`
resource "k8sconnect_patch" "also" {
  target = { api_version = "v1", kind = "ConfigMap", name = "shared", namespace = %q }
  patch  = yamlencode({ data = { greeting = "patched" } })
  take_ownership = true
  %s
}
`, ns, acctest.Connection(t)),
	} {
		other := acctest.NewWorkdir(t)
		other.Write(config)
		other.Cleanup()
		r := other.Apply()
		other.MustFail(r, what+" of a set's object")
		if !r.HasError("ApplySet " + setID) {
			t.Errorf("%s of a set's object should be refused, naming the ApplySet %s:\n%s", what, setID, r.Output)
		}
	}
	if got := acctest.MustGet(t, configMaps, ns, "shared").Object["data"].(map[string]any)["greeting"]; got != "set" {
		t.Errorf("the set's object was changed: greeting = %v", got)
	}
	w.MustPlanNoChanges()
}

// Moving objects from a for_each of k8sconnect_object into a set, as the
// guide says: the objects leave state (a removed block that keeps them),
// and a set with take_ownership takes them over in place: the same UIDs,
// no k8sconnect_object id left on them, the set's part-of label, and the
// fields kubectl held of another object taken over handed to the set; the
// next plan is quiet. Without take_ownership the same set is refused.
func TestAccManifestSet_takeOwnershipMovesObjectsIn(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  for_each  = toset(["one", "two"])
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: ${each.key}, namespace: %s}
    data: {greeting: hi}
  YAML
  %s
}
`, ns, acctest.Connection(t)))
	w.MustApply()
	acctest.ApplyAs(t, "kubectl", configMaps, configMap(ns, "by-hand", "hi"))
	uids := map[string]string{}
	for _, name := range []string{"one", "two", "by-hand"} {
		uids[name] = acctest.UID(t, configMaps, ns, name)
	}
	body := yamlBody(configMap(ns, "one", "hi"), configMap(ns, "two", "hi"), configMap(ns, "by-hand", "hi"))
	removed := "\nremoved {\n  from = k8sconnect_object.cm\n  lifecycle { destroy = false }\n}\n"

	w.Write(setConfig(t, "set", body, "") + removed)
	r := w.Apply()
	w.MustFail(r, "a set over existing objects without take_ownership")
	if !r.HasError("take_ownership") {
		t.Errorf("the refusal should name take_ownership:\n%s", r.Output)
	}

	w.Write(setConfig(t, "set", body, "take_ownership = true") + removed)
	w.Cleanup()
	r = w.Plan()
	var warned int
	for _, d := range r.Warnings() {
		if d.Summary == "Taking over an object" {
			warned++
		}
	}
	if warned != 3 {
		t.Errorf("the plan should warn of each of the 3 objects taken over, warns %v", r.Warnings())
	}
	w.MustApply()
	setID := w.StateAttribute("k8sconnect_manifest_set.set", "applyset_id")
	for name, uid := range uids {
		live := acctest.MustGet(t, configMaps, ns, name)
		if string(live.GetUID()) != uid {
			t.Errorf("%s was replaced (UID %s -> %s); a takeover is in place", name, uid, live.GetUID())
		}
		if got := live.GetLabels()[labelPartOf]; got != setID {
			t.Errorf("%s: part-of %q, want %q", name, got, setID)
		}
		if id := live.GetAnnotations()["k8sconnect.io/owned-by"]; id != "" {
			t.Errorf("%s still carries a k8sconnect_object's id %q", name, id)
		}
		for _, e := range live.GetManagedFields() {
			if e.Manager == "kubectl" && strings.Contains(e.FieldsV1.GetRawString(), "greeting") {
				t.Errorf("%s: kubectl still holds data.greeting after the takeover", name)
			}
		}
	}
	w.MustPlanNoChanges()
}

// A set given by yaml_body_wo (Terraform and OpenTofu 1.11) keeps its body
// out of state and plans: a Secret's value is in no output and not in
// state; a changed value shows as a changed keyed hash in objects and is
// applied; the next plan is quiet.
func TestAccManifestSet_writeOnlyBody(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	first, second := acctest.NewSecretValue("pw"), acctest.NewSecretValue("pw")
	body := func(v acctest.SecretValue) string {
		return fmt.Sprintf("yaml_body_wo = %q\n  yaml_body_wo_revision = 1", strings.Join([]string{
			fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: auth, namespace: %s}\nstringData: {password: %s}\n", ns, v.Plain),
			configMap(ns, "settings", "hi")}, "---\n"))
	}
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "set", body(first), ""))
	w.Cleanup()
	r := w.MustApply()
	if got := acctest.MustGet(t, secrets, ns, "auth").Object["data"].(map[string]any)["password"]; got != first.Base64() {
		t.Fatalf("the Secret's password did not reach the cluster: %v", got)
	}
	w.MustPlanNoChanges()

	w.Write(setConfig(t, "set", body(second), ""))
	plan := w.Plan()
	if _, change, _ := plan.Changes(); plan.Err != nil || change != 1 {
		t.Fatalf("a changed write-only value should plan one change: ~%d (%v)\n%s", change, plan.Err, plan.Output)
	}
	applied := w.MustApply()
	if got := acctest.MustGet(t, secrets, ns, "auth").Object["data"].(map[string]any)["password"]; got != second.Base64() {
		t.Errorf("the changed password did not reach the cluster: %v", got)
	}
	w.MustPlanNoChanges()
	outside, _, private := w.StateParts()
	acctest.ExpectPresent(t, "state", outside, "core/Secret/"+ns+"/auth")
	for _, v := range []acctest.SecretValue{first, second} {
		for _, text := range []string{r.Output, plan.Output, applied.Output, outside, private} {
			if strings.Contains(text, v.Plain) || strings.Contains(text, v.Base64()) {
				t.Errorf("a value given by yaml_body_wo is in an output or the state")
			}
		}
	}
}

// deployment is a Deployment of one Pod, held Pending (never ready) when
// hold is "true".
func deployment(ns, name, hold string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}, annotations: {k8sconnect.test/hold: %[3]q}}
    spec: {containers: [{name: app, image: registry.k8s.io/pause:3.10}]}
`, ns, name, hold)
}

// With wait (the default), an apply waits until what it changed is ready,
// and a timeout fails the run without tainting or replacing anything: a
// create keeps no state and the next apply takes the same objects up; an
// update keeps what it applied and owes the wait, which the next plan shows
// and the next apply performs, though a refresh finds nothing to change;
// wait = false settles it.
func TestAccManifestSet_waitsUntilReady(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	w := acctest.NewWorkdir(t)
	w.Cleanup()
	config := func(hold, value, extra string) string {
		return setConfig(t, "set", yamlBody(configMap(ns, "settings", value), deployment(ns, "web", hold)),
			`timeout = "6s"`+"\n"+extra)
	}
	notReady := func(r acctest.Result, what string) {
		t.Helper()
		w.MustFail(r, what)
		if !r.HasError("Objects of the set not ready", "apps/Deployment/"+ns+"/web is not ready") {
			t.Errorf("%s: the error should name the Deployment that is not ready:\n%s", what, r.Output)
		}
	}

	w.Write(config("true", "a", ""))
	notReady(w.Apply(), "a create whose Deployment never gets ready")
	if got := w.StateList(); len(got) != 0 {
		t.Errorf("a create that did not get ready should keep no state, which Terraform would taint: %v", got)
	}
	uid := acctest.UID(t, deployments, ns, "web")
	notReady(w.Apply(), "the same create again")
	if got := acctest.UID(t, deployments, ns, "web"); got != uid {
		t.Errorf("a create taken up again replaced the Deployment: UID %s, now %s", uid, got)
	}

	w.Write(config("false", "a", ""))
	w.MustApply()
	w.MustPlanNoChanges()

	w.Write(config("true", "a", ""))
	notReady(w.Apply(), "an update whose Deployment never gets ready")
	r := w.Plan() // an update in place: neither tainted nor replaced
	if add, change, remove := r.Changes(); add+change+remove != 1 || change != 1 {
		t.Errorf("after an update that did not get ready, the plan should update the set, plans +%d ~%d -%d:\n%s",
			add, change, remove, r.Output)
	}
	var owed bool
	for _, d := range r.Warnings() {
		owed = owed || (d.Summary == "Waiting again for an object that was not ready" && strings.Contains(d.Detail, "apps/Deployment/"+ns+"/web"))
	}
	if !owed {
		t.Errorf("the plan should say it waits for the Deployment again, warns %v", r.Warnings())
	}
	notReady(w.Apply(), "the owed wait, still not ready")
	if got := acctest.UID(t, deployments, ns, "web"); got != uid {
		t.Errorf("a failed update replaced the Deployment: UID %s, now %s", uid, got)
	}

	w.Write(config("true", "a", "wait = false"))
	w.MustApply()
	w.MustPlanNoChanges()
}
