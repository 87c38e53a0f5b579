package manifestset_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// kubectl runs the real kubectl with ApplySets enabled (KUBECTL_APPLYSET,
// alpha in kubectl 1.32) against the shared cluster, from dir; it returns
// what kubectl printed and whether it succeeded.
func kubectl(t *testing.T, dir string, args ...string) (string, bool) {
	t.Helper()
	bin := "/usr/bin/kubectl"
	if _, err := os.Stat(bin); err != nil {
		bin = "kubectl"
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", localcluster.Shared(t).KubeconfigPath}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECTL_APPLYSET=true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err == nil
}

// The set and kubectl's ApplySets are one and the same kind of thing: for
// the same parent, kubectl writes the id this set computed, and the same
// kinds annotation for the same kinds; each refuses to take over the other's
// parent, naming the tool that holds it.
func TestAccManifestSet_kubectlSeesTheSameApplySet(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("kubectl.yaml", configMap(ns, "by-kubectl", "k"))

	// kubectl's own set, parent secret/kubectl-made.
	if out, ok := kubectl(t, dir, "apply", "--server-side", "--prune", "--applyset=secret/kubectl-made", "-n", ns, "-f", "kubectl.yaml"); !ok {
		t.Fatalf("kubectl apply --applyset: %s", out)
	}
	kubectlParent := acctest.MustGet(t, secrets, ns, "kubectl-made")

	// Ours, parent secret/ours, with a ConfigMap too.
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "set", yamlBody(configMap(ns, "by-k8sconnect", "s")),
		`applyset = { name = "ours", namespace = "`+ns+`" }`))
	w.Cleanup()
	w.MustApply()
	ours := acctest.MustGet(t, secrets, ns, "ours")
	const kinds = "applyset.kubernetes.io/contains-group-kinds"
	if got, want := ours.GetAnnotations()[kinds], kubectlParent.GetAnnotations()[kinds]; got != want || got != "ConfigMap" {
		t.Errorf("%s: ours %q, kubectl's %q", kinds, got, want)
	}
	ourID := w.StateAttribute("k8sconnect_manifest_set.set", "applyset_id")

	// kubectl refuses our parent, and we refuse kubectl's.
	out, ok := kubectl(t, dir, "apply", "--server-side", "--prune", "--applyset=secret/ours", "-n", ns, "-f", "kubectl.yaml")
	if ok || !strings.Contains(out, "k8sconnect") {
		t.Errorf("kubectl should refuse to take over the set's parent, naming k8sconnect; it said (ok %v):\n%s", ok, out)
	}
	if got := acctest.MustGet(t, configMaps, ns, "by-k8sconnect").GetLabels()[labelPartOf]; got != ourID {
		t.Errorf("after kubectl's refusal the set's member has part-of %q, want %q", got, ourID)
	}
	other := acctest.NewWorkdir(t)
	other.Write(setConfig(t, "set", yamlBody(configMap(ns, "another", "a")), `applyset = { name = "kubectl-made", namespace = "`+ns+`" }`))
	r := other.Plan()
	other.MustFail(r, "a set naming kubectl's parent")
	if !r.HasError("kubectl-made", "managed by kubectl") {
		t.Errorf("the set should refuse kubectl's parent, naming kubectl:\n%s", r.Output)
	}

	// Destroyed, the parent's name is free: kubectl computes the same id for it.
	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy: %v\n%s", r.Err, r.Output)
	}
	if out, ok := kubectl(t, dir, "apply", "--server-side", "--prune", "--applyset=secret/ours", "-n", ns, "-f", "kubectl.yaml"); !ok {
		t.Fatalf("kubectl apply --applyset=secret/ours after the set's destroy: %s", out)
	}
	if got := acctest.MustGet(t, secrets, ns, "ours").GetLabels()[labelID]; got != ourID {
		t.Errorf("kubectl's id for secret/ours is %q; the set computed %q", got, ourID)
	}
}

// An ApplySet kubectl made is imported by its parent's namespace and name
// and taken over in place: the plan warns that it takes it over and names
// the member the source no longer gives, which the apply prunes; the member
// it keeps keeps its UID and its fields are k8sconnect's alone, so a value
// the source later drops is deleted, not left behind as kubectl's; the
// parent is k8sconnect's, which kubectl then refuses. An id that names no
// parent, or an object that is not one, is refused at plan.
func TestAccManifestSet_importsKubectlsApplySet(t *testing.T) {
	t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
	ns := acctest.Namespace(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"),
		[]byte(configMap(ns, "stays", "a")+"---\n"+configMap(ns, "leaves", "b")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, ok := kubectl(t, dir, "apply", "--server-side", "--prune", "--applyset=secret/legacy", "-n", ns, "-f", "app.yaml"); !ok {
		t.Fatalf("kubectl apply --applyset: %s", out)
	}
	uid := acctest.UID(t, configMaps, ns, "stays")
	importing := fmt.Sprintf("\nimport {\n  to = k8sconnect_manifest_set.set\n  id = %q\n}\n", ns+"/legacy")
	applySet := `applyset = { name = "legacy", namespace = "` + ns + `" }`

	w := acctest.NewWorkdir(t)
	w.Cleanup()
	w.Write(setConfig(t, "set", yamlBody(configMap(ns, "stays", "a")), applySet) + importing)
	r := w.Plan()
	if r.Err != nil || len(r.Errors()) > 0 {
		t.Fatalf("%s plan of the import: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
	var warned bool
	for _, d := range r.Warnings() {
		warned = warned || (d.Summary == "Taking over an imported set" && strings.Contains(d.Detail, "kubectl"))
	}
	if !warned {
		t.Errorf("the plan should warn that it takes over kubectl's set, warns %v", r.Warnings())
	}
	w.MustApply()
	if got := acctest.UID(t, configMaps, ns, "stays"); got != uid {
		t.Errorf("the imported ConfigMap was replaced: UID %s, now %s", uid, got)
	}
	if obj, err := acctest.Get(t, configMaps, ns, "leaves"); err != nil || obj != nil {
		t.Error("the member the source no longer gives should be pruned")
	}
	for _, e := range acctest.MustGet(t, configMaps, ns, "stays").GetManagedFields() {
		if e.Manager != "k8sconnect" && strings.Contains(e.FieldsV1.GetRawString(), "greeting") {
			t.Errorf("after the takeover %s still owns data.greeting: %s", e.Manager, e.FieldsV1.GetRawString())
		}
	}
	if tooling := acctest.MustGet(t, secrets, ns, "legacy").GetAnnotations()["applyset.kubernetes.io/tooling"]; !strings.HasPrefix(tooling, "k8sconnect/") {
		t.Errorf("the parent's tooling is %q after the takeover, want k8sconnect's", tooling)
	}
	w.MustPlanNoChanges()

	// The source drops greeting for another key: gone, not kubectl's leftover.
	w.Write(setConfig(t, "set", yamlBody(strings.Replace(configMap(ns, "stays", "a"), "greeting: a", "farewell: z", 1)), applySet))
	w.MustApply()
	if data := acctest.MustGet(t, configMaps, ns, "stays").Object["data"]; fmt.Sprint(data) != "map[farewell:z]" {
		t.Errorf("the dropped value should be deleted: data is %v", data)
	}
	if out, ok := kubectl(t, dir, "apply", "--server-side", "--prune", "--applyset=secret/legacy", "-n", ns, "-f", "app.yaml"); ok || !strings.Contains(out, "k8sconnect") {
		t.Errorf("kubectl should refuse the set it lost, naming k8sconnect; it said (ok %v):\n%s", ok, out)
	}

	for id, want := range map[string]string{ns + "/absent": "no Secret or ConfigMap", ns + "/plain": "is not an ApplySet parent"} {
		if id == ns+"/plain" {
			if out, ok := kubectl(t, dir, "create", "secret", "generic", "plain", "-n", ns, "--from-literal=k=v"); !ok {
				t.Fatal(out)
			}
		}
		other := acctest.NewWorkdir(t)
		other.Write(setConfig(t, "set", yamlBody(configMap(ns, "other", "o")), "") +
			fmt.Sprintf("\nimport {\n  to = k8sconnect_manifest_set.set\n  id = %q\n}\n", id))
		r := other.Plan()
		other.MustFail(r, "an import of "+id)
		if !r.HasError(want) {
			t.Errorf("the import of %s should say %q:\n%s", id, want, r.Output)
		}
	}
}

// A custom resource can be the set's parent when its CRD carries kubectl's
// is-parent-type label: the set writes kubectl's marks on the resource the
// user made (the id computed with the kind's group, as kubectl computes it,
// so kubectl refuses it as k8sconnect's), and its destroy deletes the members
// and takes the marks off the parent, which stays. A CRD without the label,
// or a parent that does not exist, is refused at plan.
func TestAccManifestSet_customResourceParent(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	group := acctest.Name("g") + ".parent.k8sconnect.test"
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	labelled := strings.Replace(fixtures.CRD(group, "Release", "track: {type: string}"),
		"metadata: {name: releases."+group+"}",
		"metadata: {name: releases."+group+", labels: {applyset.kubernetes.io/is-parent-type: \"true\"}}", 1)
	write("crds.yaml", labelled+"---\n"+fixtures.CRD(group, "Plain", "track: {type: string}"))
	write("parents.yaml", fmt.Sprintf("apiVersion: %[1]s/v1\nkind: Release\nmetadata: {name: app, namespace: %[2]s}\nspec: {track: stable}\n"+
		"---\napiVersion: %[1]s/v1\nkind: Plain\nmetadata: {name: app, namespace: %[2]s}\nspec: {track: stable}\n", group, ns))
	if out, ok := kubectl(t, dir, "apply", "-f", "crds.yaml"); !ok {
		t.Fatal(out)
	}
	kubectlWaitEstablished(t, dir, "crd/releases."+group, "crd/plains."+group)
	t.Cleanup(func() { kubectl(t, dir, "delete", "--ignore-not-found", "-f", "crds.yaml") })
	if out, ok := kubectl(t, dir, "apply", "-f", "parents.yaml"); !ok {
		t.Fatal(out)
	}
	releases := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "releases"}
	parentOf := func(kind, name string) string {
		return fmt.Sprintf(`applyset = { name = %q, kind = %q, api_version = "%s/v1" }`+"\nnamespace = %q", name, kind, group, ns)
	}

	w := acctest.NewWorkdir(t)
	w.Cleanup()
	w.Write(setConfig(t, "set", yamlBody(configMap(ns, "settings", "a")), parentOf("Release", "app")))
	w.MustApply()
	id := w.StateAttribute("k8sconnect_manifest_set.set", "applyset_id")
	parent := acctest.MustGet(t, releases, ns, "app")
	if got := parent.GetLabels()[labelID]; got != id || got == "" {
		t.Errorf("the custom resource parent's id label is %q, the set's applyset_id %q", got, id)
	}
	if got := acctest.MustGet(t, configMaps, ns, "settings").GetLabels()[labelPartOf]; got != id {
		t.Errorf("the member's part-of label is %q, want %q", got, id)
	}
	w.MustPlanNoChanges()
	// kubectl finds the same parent by its resource and group, and refuses it
	// as another tool's: the id is the one it computes.
	write("kubectl.yaml", configMap(ns, "by-kubectl", "k"))
	if out, ok := kubectl(t, dir, "apply", "--server-side", "--prune", "--applyset=releases."+group+"/app", "-n", ns, "-f", "kubectl.yaml"); ok || !strings.Contains(out, "k8sconnect") {
		t.Errorf("kubectl should refuse the set's custom resource parent, naming k8sconnect; it said (ok %v):\n%s", ok, out)
	}

	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy: %v\n%s", r.Err, r.Output)
	}
	parent = acctest.MustGet(t, releases, ns, "app")
	if _, marked := parent.GetLabels()[labelID]; marked || parent.GetAnnotations()["applyset.kubernetes.io/tooling"] != "" {
		t.Errorf("the destroy should leave the parent without the set's marks: labels %v, annotations %v", parent.GetLabels(), parent.GetAnnotations())
	}
	if obj, err := acctest.Get(t, configMaps, ns, "settings"); err != nil || obj != nil {
		t.Errorf("the destroy should delete the member: %v, %v", obj, err)
	}

	for parentArgs, want := range map[string]string{
		parentOf("Plain", "app"):      "lacks the label applyset.kubernetes.io/is-parent-type=true",
		parentOf("Release", "absent"): "does not exist",
	} {
		other := acctest.NewWorkdir(t)
		other.Write(setConfig(t, "set", yamlBody(configMap(ns, "other", "o")), parentArgs))
		r := other.Plan()
		other.MustFail(r, "a plan naming "+parentArgs)
		if !r.HasError(want) {
			t.Errorf("a plan naming %s should say %q:\n%s", parentArgs, want, r.Output)
		}
	}
}

// A cluster-scoped custom resource parent has no namespace, whatever the
// set's namespace is: the set marks it, plans no change after, and its
// destroy takes the marks off it and leaves it.
func TestAccManifestSet_clusterScopedCustomResourceParent(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	group := acctest.Name("g") + ".cparent.k8sconnect.test"
	dir := t.TempDir()
	crd := strings.Replace(strings.Replace(fixtures.CRD(group, "Stack", "track: {type: string}"),
		"metadata: {name: stacks."+group+"}",
		"metadata: {name: stacks."+group+", labels: {applyset.kubernetes.io/is-parent-type: \"true\"}}", 1),
		"scope: Namespaced", "scope: Cluster", 1)
	parentName := acctest.Name("stack")
	for name, text := range map[string]string{"crd.yaml": crd,
		"parent.yaml": fmt.Sprintf("apiVersion: %s/v1\nkind: Stack\nmetadata: {name: %s}\nspec: {track: stable}\n", group, parentName)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, ok := kubectl(t, dir, "apply", "-f", "crd.yaml"); !ok {
		t.Fatal(out)
	}
	t.Cleanup(func() { kubectl(t, dir, "delete", "--ignore-not-found", "-f", "crd.yaml") })
	kubectlWaitEstablished(t, dir, "crd/stacks."+group)
	if out, ok := kubectl(t, dir, "apply", "-f", "parent.yaml"); !ok {
		t.Fatal(out)
	}
	stacks := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "stacks"}

	w := acctest.NewWorkdir(t)
	w.Cleanup()
	w.Write(setConfig(t, "set", yamlBody(configMap(ns, "settings", "a")),
		fmt.Sprintf(`applyset = { name = %q, kind = "Stack", api_version = "%s/v1" }`+"\nnamespace = %q", parentName, group, ns)))
	w.MustApply()
	id := w.StateAttribute("k8sconnect_manifest_set.set", "applyset_id")
	if got := acctest.MustGet(t, stacks, "", parentName).GetLabels()[labelID]; got != id || got == "" {
		t.Errorf("the cluster-scoped parent's id label is %q, the set's applyset_id %q", got, id)
	}
	w.MustPlanNoChanges()
	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy: %v\n%s", r.Err, r.Output)
	}
	if _, marked := acctest.MustGet(t, stacks, "", parentName).GetLabels()[labelID]; marked {
		t.Error("the destroy should take the set's marks off the cluster-scoped parent")
	}
}

// kubectlWaitEstablished is `kubectl wait --for=condition=Established` of
// crds, asked again while kubectl fails outright on a CRD whose status has
// no conditions yet (".status.conditions accessor error"), as kubectl 1.32
// does when it reads one just made.
func kubectlWaitEstablished(t *testing.T, dir string, crds ...string) {
	t.Helper()
	args := append([]string{"wait", "--for=condition=Established", "--timeout=60s"}, crds...)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		out, ok := kubectl(t, dir, args...)
		if ok {
			return
		}
		if !strings.Contains(out, "accessor error") || time.Now().After(deadline) {
			t.Fatal(out)
		}
	}
}
