package manifestset_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/vendorfiles"
)

// member is one object of a bundle as a user names it, with where to find
// it in the cluster.
type member struct {
	key string // as objects keys it
	gvr schema.GroupVersionResource
	ns  string
	// name is the object's name.
	name string
}

// clusterScoped are the cluster-scoped kinds of Argo CD's install.yaml.
var clusterScoped = map[string]bool{"CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true}

// bundleMembers are the objects of docs, each in namespace ns unless it is
// cluster-scoped or names its own, keyed as objects keys them.
func bundleMembers(t *testing.T, docs []string, ns string) []member {
	t.Helper()
	var out []member
	for _, d := range docs {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(d), &obj); err != nil || obj.Kind == "" {
			t.Fatalf("a document of the bundle: %v\n%.300s", err, d)
		}
		group, version, found := strings.Cut(obj.APIVersion, "/")
		if !found {
			group, version = "", obj.APIVersion
		}
		m := member{gvr: schema.GroupVersionResource{Group: group, Version: version, Resource: resourceOf(obj.Kind)}, name: obj.Metadata.Name}
		if !clusterScoped[obj.Kind] {
			m.ns = cmp.Or(obj.Metadata.Namespace, ns)
		}
		keyGroup := cmp.Or(group, "core")
		if m.ns == "" {
			m.key = keyGroup + "/" + obj.Kind + "/" + m.name
		} else {
			m.key = keyGroup + "/" + obj.Kind + "/" + m.ns + "/" + m.name
		}
		out = append(out, m)
	}
	return out
}

// resourceOf is the resource of the kinds a bundle holds: lower case and
// plural, as all of Argo CD's are.
func resourceOf(kind string) string {
	k := strings.ToLower(kind)
	if strings.HasSuffix(k, "y") {
		return strings.TrimSuffix(k, "y") + "ies"
	}
	return k + "s"
}

// stateObjects are the keys of the set's objects in state.
func stateObjects(t *testing.T, w *acctest.Workdir, address string) []string {
	t.Helper()
	var objects map[string]map[string]string
	if err := json.Unmarshal([]byte(w.StateAttribute(address, "objects")), &objects); err != nil {
		t.Fatalf("objects of %s: %v", address, err)
	}
	keys := make([]string, 0, len(objects))
	for k := range objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func keysOf(members []member) []string {
	keys := make([]string, 0, len(members))
	for _, m := range members {
		keys = append(keys, m.key)
	}
	sort.Strings(keys)
	return keys
}

// uids are the members' UIDs in the cluster, each of which must exist and
// carry the set's part-of label.
func uids(t *testing.T, members []member, setID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range members {
		obj := acctest.MustGet(t, m.gvr, m.ns, m.name)
		if got := obj.GetLabels()[labelPartOf]; got != setID {
			t.Errorf("%s: part-of label %q, want the set's %q", m.key, got, setID)
		}
		out[m.key] = string(obj.GetUID())
	}
	return out
}

// Argo CD 3.5.7's install.yaml, unchanged, as its getting-started guide has
// a user apply it (`kubectl apply -n argocd --server-side -f install.yaml`):
// 59 objects, three large CRDs among them, and its namespaced objects with
// no namespace of their own. As one set it is created in one apply, waited
// for, every member labelled as the set's; kubectl lists the same members by
// the parent's marks; a second plan is empty. Then the edits a new user
// makes in the file: a ConfigMap value (server.insecure, for a TLS-ending
// ingress) is one update of the set, the ConfigMap's UID unchanged; cutting
// Dex (six documents) names the six in the plan and deletes them, every
// other member keeping its UID. Destroy deletes everything, CRDs and
// cluster-wide RBAC included, and the parent.
func TestAccManifestSet_argoCDInstall(t *testing.T) {
	t.Parallel()
	install := string(vendorfiles.ArgoCDInstall.Read(t))
	ns := acctest.Namespace(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "install.yaml")
	write := func(docs []string) {
		if err := os.WriteFile(file, []byte(vendorfiles.JoinDocuments(docs)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	docs := vendorfiles.ArgoCDDocuments(t)
	all := bundleMembers(t, docs, ns)
	const address = "k8sconnect_manifest_set.argocd"
	write(docs)
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "argocd", fmt.Sprintf("path = %q", file), fmt.Sprintf("namespace = %q\n  timeout = \"3m\"", ns)))
	w.Cleanup()
	w.MustApply()

	if got, want := stateObjects(t, w, address), keysOf(all); !slices.Equal(got, want) {
		t.Errorf("objects keys:\n%v\nwant the bundle's:\n%v", got, want)
	}
	setID := w.StateAttribute(address, "applyset_id")
	before := uids(t, all, setID)
	expectKubectlSees(t, w, address, all)
	w.MustPlanNoChanges()

	// One value, as a user sets it behind a TLS-ending ingress.
	edited := vendorfiles.ArgoCDInsecure(t, docs)
	write(edited)
	r := w.Plan()
	if add, change, remove := r.Changes(); r.Err != nil || add+remove != 0 || change != 1 {
		t.Fatalf("a ConfigMap value should plan one update: +%d ~%d -%d (%v)\n%.3000s", add, change, remove, r.Err, r.Output)
	}
	if human := w.Human("plan").Output; !strings.Contains(human, "core/ConfigMap/"+ns+"/argocd-cmd-params-cm") || !strings.Contains(human, `"true"`) {
		t.Errorf("the plan should show the ConfigMap's new value:\n%.4000s", human)
	}
	w.MustApply()
	if got := acctest.MustGet(t, configMaps, ns, "argocd-cmd-params-cm").Object["data"]; fmt.Sprint(got) != "map[server.insecure:true]" {
		t.Errorf("argocd-cmd-params-cm data after the update: %v", got)
	}
	if got, want := acctest.UID(t, configMaps, ns, "argocd-cmd-params-cm"), before["core/ConfigMap/"+ns+"/argocd-cmd-params-cm"]; got != want {
		t.Errorf("the ConfigMap was replaced: UID %s -> %s", want, got)
	}
	w.MustPlanNoChanges()

	// Dex cut from the file.
	kept, cut := vendorfiles.ArgoCDWithoutDex(t, edited)
	gone := bundleMembers(t, cut, ns)
	stays := bundleMembers(t, kept, ns)
	write(kept)
	human := w.Human("plan").Output
	for _, m := range gone {
		if !strings.Contains(human, `- "`+m.key+`"`) {
			t.Errorf("the plan should name %s as removed:\n%.6000s", m.key, human)
		}
	}
	w.MustApply()
	for _, m := range gone {
		acctest.MustNotExist(t, m.gvr, m.ns, m.name)
	}
	after := uids(t, stays, setID)
	for key, uid := range after {
		if before[key] != uid {
			t.Errorf("%s was replaced when Dex was pruned: UID %s -> %s", key, before[key], uid)
		}
	}
	if got, want := stateObjects(t, w, address), keysOf(stays); !slices.Equal(got, want) {
		t.Errorf("objects keys after pruning Dex:\n%v\nwant:\n%v", got, want)
	}
	expectKubectlSees(t, w, address, stays)
	w.MustPlanNoChanges()

	parent := w.StateAttribute(address, "id")
	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy: %v\n%.3000s", r.Err, r.Output)
	}
	for _, m := range stays {
		acctest.MustNotExist(t, m.gvr, m.ns, m.name)
	}
	pns, pname, _ := strings.Cut(parent, "/")
	acctest.MustNotExist(t, secrets, pns, pname)

	// The same install, as a kustomize overlay, then as one made by kubectl
	// and taken over: the cluster is free of it again each time, so the
	// fixed cluster-wide names are each one's own.
	argoCDOverlay(t, install, ns)
	argoCDFromKubectl(t, install, ns)
}

// argoCDFromKubectl is the user who installed Argo CD with kubectl, as its
// guide says (`kubectl apply -n argocd --server-side -f install.yaml`), and
// then puts it under a set: without take_ownership the plan refuses,
// naming kubectl; with it, the plan warns of each of the 59 objects, the
// apply takes them over in place (same UIDs, the set's label, kubectl
// holding none of the fields the file sets), and the next plan is quiet.
func argoCDFromKubectl(t *testing.T, install, ns string) {
	dir := t.TempDir()
	file := filepath.Join(dir, "install.yaml")
	if err := os.WriteFile(file, []byte(install), 0o600); err != nil {
		t.Fatal(err)
	}
	all := bundleMembers(t, vendorfiles.ArgoCDDocuments(t), ns)
	w := acctest.NewWorkdir(t)
	w.Cleanup()
	if out, ok := kubectl(t, dir, "apply", "--server-side", "-n", ns, "-f", "install.yaml"); !ok {
		t.Fatalf("kubectl apply --server-side -f install.yaml: %s", out)
	}
	before := map[string]string{}
	for _, m := range all {
		before[m.key] = acctest.UID(t, m.gvr, m.ns, m.name)
	}
	set := func(more string) string {
		return setConfig(t, "argocd", fmt.Sprintf("path = %q", file), fmt.Sprintf("namespace = %q\n  timeout = \"3m\"\n  %s", ns, more))
	}
	w.Write(set(""))
	r := w.Plan()
	w.MustFail(r, "a set over Argo CD as kubectl installed it, without take_ownership")
	if !r.HasError("take_ownership", "kubectl") {
		t.Errorf("the refusal should name kubectl and take_ownership:\n%.3000s", r.Output)
	}

	w.Write(set("take_ownership = true"))
	r = w.Plan()
	warned := map[string]bool{}
	for _, d := range r.Warnings() {
		if d.Summary == "Taking over an object" && strings.Contains(d.Detail, "kubectl") {
			for _, m := range all {
				warned[m.key] = warned[m.key] || strings.Contains(d.Detail, m.key)
			}
		}
	}
	for _, m := range all {
		if !warned[m.key] {
			t.Errorf("the plan should warn that it takes %s from kubectl", m.key)
		}
	}
	w.MustApply()
	setID := w.StateAttribute("k8sconnect_manifest_set.argocd", "applyset_id")
	for key, uid := range uids(t, all, setID) {
		if before[key] != uid {
			t.Errorf("%s was replaced (UID %s -> %s); a takeover is in place", key, before[key], uid)
		}
	}
	for _, m := range all {
		for _, e := range acctest.MustGet(t, m.gvr, m.ns, m.name).GetManagedFields() {
			if e.Manager == "kubectl" {
				t.Errorf("%s: kubectl still holds fields after the takeover: %.300s", m.key, e.FieldsV1.GetRawString())
			}
		}
	}
	w.MustPlanNoChanges()
	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy of the set taken over: %v\n%.3000s", r.Err, r.Output)
	}
	for _, m := range all {
		acctest.MustNotExist(t, m.gvr, m.ns, m.name)
	}
}

// argoCDOverlay applies Argo CD's install.yaml through a kustomization as
// its docs suggest (namespace, a patch of argocd-cmd-params-cm): the set
// holds what kustomize builds, the patch applied; a replicas entry added to the kustomization is one
// update, the Deployment's UID unchanged; destroy deletes it all. (Each
// plan builds the kustomization: about 1.2 CPU-seconds for this bundle, so
// the overlay is kept to these steps.)
func argoCDOverlay(t *testing.T, install, ns string) {
	dir := t.TempDir()
	files := map[string]string{"install.yaml": install}
	// kustomization writes the overlay with more entries (replicas, other
	// top-level fields).
	kustomization := func(more string) {
		files["kustomization.yaml"] = fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
- install.yaml
%s
patches:
- patch: |-
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: argocd-cmd-params-cm
    data:
      server.insecure: "true"
`, ns, more)
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	kustomization("")
	const address = "k8sconnect_manifest_set.overlay"
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "overlay", fmt.Sprintf("kustomization = %q", dir), `timeout = "3m"`))
	w.Cleanup()
	w.MustApply()
	all := bundleMembers(t, vendorfiles.ArgoCDDocuments(t), ns)
	if got, want := stateObjects(t, w, address), keysOf(all); !slices.Equal(got, want) {
		t.Errorf("objects keys of the overlay:\n%v\nwant the bundle's:\n%v", got, want)
	}
	setID := w.StateAttribute(address, "applyset_id")
	before := uids(t, all, setID)
	if got := acctest.MustGet(t, configMaps, ns, "argocd-cmd-params-cm").Object["data"]; fmt.Sprint(got) != "map[server.insecure:true]" {
		t.Errorf("argocd-cmd-params-cm data from the overlay's patch: %v", got)
	}
	w.MustPlanNoChanges()

	const replicas = "replicas:\n- name: argocd-server\n  count: 2"
	kustomization(replicas)
	r := w.Plan()
	if add, change, remove := r.Changes(); r.Err != nil || add+remove != 0 || change != 1 {
		t.Fatalf("a replicas entry should plan one update: +%d ~%d -%d (%v)\n%.3000s", add, change, remove, r.Err, r.Output)
	}
	w.MustApply()
	server := acctest.MustGet(t, deployments, ns, "argocd-server")
	if replicas, _, _ := unstructured.NestedInt64(server.Object, "spec", "replicas"); replicas != 2 || string(server.GetUID()) != before["apps/Deployment/"+ns+"/argocd-server"] {
		t.Errorf("argocd-server after the replicas entry: %d replicas, UID %s (was %s)", replicas, server.GetUID(), before["apps/Deployment/"+ns+"/argocd-server"])
	}
	w.MustPlanNoChanges()

	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy of the overlay: %v\n%.3000s", r.Err, r.Output)
	}
	for _, m := range all {
		acctest.MustNotExist(t, m.gvr, m.ns, m.name)
	}
}

// expectKubectlSees: kubectl, asked for the set's members as its ApplySet
// code finds them (the kinds the parent's contains-group-kinds names,
// labelled part-of the set's id), lists exactly members.
func expectKubectlSees(t *testing.T, w *acctest.Workdir, address string, members []member) {
	t.Helper()
	parent := w.StateAttribute(address, "id")
	pns, pname, _ := strings.Cut(parent, "/")
	obj := acctest.MustGet(t, secrets, pns, pname)
	kinds := obj.GetAnnotations()["applyset.kubernetes.io/contains-group-kinds"]
	id := obj.GetLabels()[labelID]
	var want []string
	for _, m := range members {
		want = append(want, strings.ToLower(m.ns+"/"+m.gvr.Resource+"."+m.gvr.Group+"/"+m.name))
	}
	sort.Strings(want)
	var resources []string
	for _, gk := range strings.Split(kinds, ",") {
		resources = append(resources, resourceOf(strings.Split(gk, ".")[0])+strings.TrimPrefix(gk, strings.Split(gk, ".")[0]))
	}
	out, ok := kubectl(t, w.Dir(), "get", strings.Join(resources, ","), "-A", "-l", labelPartOf+"="+id,
		"-o", `jsonpath={range .items[*]}{.metadata.namespace}|{.kind}|{.apiVersion}|{.metadata.name}{"\n"}{end}`)
	if !ok {
		t.Fatalf("kubectl get the set's members: %s", out)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 4 {
			t.Fatalf("kubectl printed %q", line)
		}
		group, _, found := strings.Cut(f[2], "/")
		if !found {
			group = ""
		}
		got = append(got, strings.ToLower(f[0]+"/"+resourceOf(f[1])+"."+group+"/"+f[3]))
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("kubectl lists the set (%s, kinds %s) as:\n%v\nwant:\n%v", id, kinds, got, want)
	}
}
