package bridge_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// ManifestSet under the real Pulumi engine: a bundle with a Secret is
// created in one step (the parent Secret and every member carry the
// ApplySet's marks); a preview changes nothing; a changed value is an update
// in place; an object taken out of the bundle is pruned; drift on an owned
// field is put back by a plain up (no refresh); the Secret's value
// is in no output and not in the stack's state in clear (yamlBody is a
// secret there); destroy deletes every object and the parent.
func TestPulumiManifestSet(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	pw := acctest.NewSecretValue("pw")
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	program := func(greeting string, extra bool) string {
		t.Helper()
		docs := []string{
			fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {greeting: %s}\n", ns, greeting),
			fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: auth, namespace: %s}\nstringData: {password: %s}\n", ns, pw.Plain),
		}
		if extra {
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: %s}\ndata: {note: extra}\n", ns))
		}
		b, err := yaml.Marshal(map[string]any{
			"name": "k8sconnect-manifest-set", "runtime": "yaml",
			"resources": map[string]any{
				"bundle": map[string]any{"type": "k8sconnect:ManifestSet", "properties": map[string]any{
					"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
					"namespace":         ns,
					"yamlBody":          strings.Join(docs, "---\n"),
				}},
			},
			"outputs": map[string]any{"objects": "${bundle.objects}", "applysetId": "${bundle.applysetId}", "id": "${bundle.id}"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	s := pulumitest.NewYAMLProgram(t, program("hello", true))
	up := s.Run(pulumitest.Up, nil)
	expectChanges(t, up, map[string]int{"create": 2})
	if strings.Contains(up.Log, "kept in state") {
		t.Errorf("Pulumi marks a yamlBody with a Secret secret; it should not be warned that the body is kept in state:\n%s", up.Log)
	}
	if err := acctest.ConfigMapHas(t, ns, "settings", "greeting", "hello"); err != nil {
		t.Error(err)
	}
	setID := fmt.Sprint(up.Outputs["applysetId"])
	for _, name := range []string{"settings", "extra"} {
		if got := acctest.MustGet(t, configMaps, ns, name).GetLabels()["applyset.kubernetes.io/part-of"]; got != setID {
			t.Errorf("ConfigMap %s: part-of %q, want %q", name, got, setID)
		}
	}
	pns, pname, _ := strings.Cut(fmt.Sprint(up.Outputs["id"]), "/")
	if got := acctest.MustGet(t, secrets, pns, pname).GetLabels()["applyset.kubernetes.io/id"]; got != setID {
		t.Errorf("the parent's id label %q, want %q", got, setID)
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})

	uid := acctest.UID(t, configMaps, ns, "settings")
	s.WriteYAML(program("bonjour", false))
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"update": 1, "same": 1})
	if err := acctest.ConfigMapHas(t, ns, "settings", "greeting", "bonjour"); err != nil {
		t.Error(err)
	}
	if got := acctest.UID(t, configMaps, ns, "settings"); got != uid {
		t.Errorf("the update replaced the ConfigMap: UID %s -> %s", uid, got)
	}
	if obj, err := acctest.Get(t, configMaps, ns, "extra"); err != nil || obj != nil {
		t.Errorf("the ConfigMap taken out of the bundle should be pruned: %v, %v", obj, err)
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})

	// Drift on an owned field, then a plain up (no refresh): put back.
	acctest.PatchAs(t, "kubectl-edit", configMaps, ns, "settings", `{"data":{"greeting":"edited"}}`)
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"update": 1, "same": 1})
	if err := acctest.ConfigMapHas(t, ns, "settings", "greeting", "bonjour"); err != nil {
		t.Errorf("a plain pulumi up should put the drifted value back: %v", err)
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})

	// Deleted outside, then a plain up (no refresh): made again, though the
	// stack's state still holds it as it was.
	if err := acctest.Dynamic(t).Resource(configMaps).Namespace(ns).Delete(context.Background(), "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"update": 1, "same": 1})
	if err := acctest.ConfigMapHas(t, ns, "settings", "greeting", "bonjour"); err != nil {
		t.Errorf("a plain pulumi up should make the deleted object again: %v", err)
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})

	state := s.CLI("stack", "export")
	for _, form := range []string{pw.Plain, pw.Base64()} {
		if strings.Contains(state, form) || strings.Contains(up.Log, form) {
			t.Errorf("the Secret's value (%q form) is in the stack's state or the engine's output in clear", form)
		}
	}
	expectChanges(t, s.Run(pulumitest.Destroy, nil), map[string]int{"delete": 2})
	acctest.MustNotExist(t, configMaps, ns, "settings")
	acctest.MustNotExist(t, secrets, ns, "auth")
	acctest.MustNotExist(t, secrets, pns, pname)
}

// A kustomization that inflates a Helm chart and loads a file from outside
// its directory, under Pulumi: refused at preview without kustomizeOptions,
// naming the setting; with them, up makes the chart's and the file's
// objects, and a preview is quiet.
func TestPulumiManifestSet_kustomizeOptions(t *testing.T) {
	skipShort(t)
	t.Parallel()
	helm, err := toolchain.Built(context.Background(), toolchain.Helm)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	dir, err := fixtures.KustomizationNeedingFlags(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	program := func(options map[string]any) string {
		t.Helper()
		props := map[string]any{"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig}, "namespace": ns,
			"kustomization": dir}
		if options != nil {
			props["kustomizeOptions"] = options
		}
		b, err := yaml.Marshal(map[string]any{"name": "k8sconnect-kustomize-options", "runtime": "yaml",
			"resources": map[string]any{"bundle": map[string]any{"type": "k8sconnect:ManifestSet", "properties": props}}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	s := pulumitest.NewYAMLProgram(t, program(map[string]any{"loadRestrictor": "LoadRestrictionsNone"}))
	if res, err := s.Try(pulumitest.Preview, nil); err == nil || !strings.Contains(res.Log, "kustomizeOptions.enableHelm = true") {
		t.Fatalf("a kustomization with helmCharts, without enableHelm: want a refused preview naming the setting, got %+v\n%s", err, res.Log)
	}
	s.WriteYAML(program(map[string]any{"loadRestrictor": "LoadRestrictionsNone", "enableHelm": true, "helmCommand": helm}))
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"create": 2})
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	acctest.MustGet(t, configMaps, ns, "shared-settings")
	if err := acctest.ConfigMapHas(t, ns, "web-greeting", "greeting", "hi"); err != nil {
		t.Error(err)
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})
}

// What an update's plan must still refuse before anything is applied, now
// that Pulumi's update plans a new member by reading whether it exists
// instead of dry-running it (its preview dry-ran it): `pulumi up
// --skip-preview`, as this suite runs every up, of a set whose ConfigMap
// someone made with kubectl is refused naming it and takeOwnership, and
// nothing of the set is made, not even its CRD or parent. A member the
// server rejects is refused by a preview before anything is applied; an up
// without a preview fails at the apply naming it, and once fixed the next up
// finishes the set, every object the set's.
func TestPulumiManifestSet_updatePlanRefusesBeforeApplying(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	group := strings.ToLower(acctest.Name("upd")) + ".k8sconnect.test"
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	const service = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: %s}]}\n"
	program := func(port string) string {
		t.Helper()
		docs := []string{
			fixtures.CRD(group, "Widget", "size: {type: integer}"),
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {greeting: hello}\n",
			fmt.Sprintf(service, port),
		}
		b, err := yaml.Marshal(map[string]any{
			"name": "k8sconnect-manifest-set-refusals", "runtime": "yaml",
			"resources": map[string]any{"bundle": map[string]any{"type": "k8sconnect:ManifestSet", "properties": map[string]any{
				"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
				"namespace":         ns,
				"yamlBody":          strings.Join(docs, "---\n"),
			}}},
			"outputs": map[string]any{"id": "${bundle.id}"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	t.Cleanup(func() {
		_ = acctest.Dynamic(t).Resource(crds).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
	})
	nothingMade := func(when string) {
		t.Helper()
		if obj, err := acctest.Get(t, crds, "", "widgets."+group); err != nil || obj != nil {
			t.Errorf("%s: the set's CRD was made (%v)", when, err)
		}
		list, err := acctest.Dynamic(t).Resource(secrets).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list.Items {
			if strings.HasPrefix(s.GetName(), "k8sconnect-set-") {
				t.Errorf("%s: the set's parent %s was made", when, s.GetName())
			}
		}
	}

	// Someone else's ConfigMap: refused before anything is applied.
	acctest.ApplyAs(t, "kubectl", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {greeting: theirs}\n", ns))
	s := pulumitest.NewYAMLProgram(t, program("80"))
	_, err := s.Try(pulumitest.Up, nil)
	if err == nil || !strings.Contains(err.Error(), "settings") || !strings.Contains(err.Error(), "takeOwnership") {
		t.Fatalf("up --skip-preview over someone else's ConfigMap: want a refusal naming it and takeOwnership, got %v", err)
	}
	nothingMade("refused over someone else's ConfigMap")
	if err := acctest.Dynamic(t).Resource(configMaps).Namespace(ns).Delete(context.Background(), "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A port the server rejects: a preview refuses it, nothing applied.
	s.WriteYAML(program("70000"))
	if _, err := s.Try(pulumitest.Preview, nil); err == nil || !strings.Contains(err.Error(), "70000") {
		t.Fatalf("preview of a Service port the server rejects: want the server's refusal naming it, got %v", err)
	}
	nothingMade("a preview")
	// Without a preview: the apply names it.
	if _, err := s.Try(pulumitest.Up, nil); err == nil || !strings.Contains(err.Error(), "70000") {
		t.Fatalf("up --skip-preview of a Service port the server rejects: want the server's refusal naming it, got %v", err)
	}
	s.WriteYAML(program("80"))
	up := s.Run(pulumitest.Up, nil)
	pns, pname, _ := strings.Cut(fmt.Sprint(up.Outputs["id"]), "/")
	setID := acctest.MustGet(t, secrets, pns, pname).GetLabels()["applyset.kubernetes.io/id"]
	for _, o := range []struct {
		gvr      schema.GroupVersionResource
		ns, name string
	}{{crds, "", "widgets." + group}, {configMaps, ns, "settings"}, {schema.GroupVersionResource{Version: "v1", Resource: "services"}, ns, "web"}} {
		if got := acctest.MustGet(t, o.gvr, o.ns, o.name).GetLabels()["applyset.kubernetes.io/part-of"]; got != setID {
			t.Errorf("%s %s after the fixed up: part-of %q, want the set's %q", o.gvr.Resource, o.name, got, setID)
		}
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})
}
