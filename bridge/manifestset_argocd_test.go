package bridge_test

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/testing/vendorfiles"
)

// Argo CD 3.5.7's install.yaml, unchanged, as one ManifestSet under the
// Pulumi engine, as a new user of its guide would: `pulumi up` makes its 59
// objects and waits for them, a preview is quiet; one ConfigMap value
// edited in the file is one update of the set, the ConfigMap's UID kept;
// Dex cut from the file (six documents) is pruned, every other object kept
// in place; `pulumi destroy` leaves nothing, CRDs and cluster-wide RBAC
// included. (The same under Terraform and OpenTofu:
// provider/manifestset/argocd_test.go.)
func TestPulumiManifestSet_argoCDInstall(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	file := filepath.Join(t.TempDir(), "install.yaml")
	write := func(docs []string) {
		if err := os.WriteFile(file, []byte(vendorfiles.JoinDocuments(docs)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	docs := vendorfiles.ArgoCDDocuments(t)
	write(docs)
	program, err := yaml.Marshal(map[string]any{"name": "k8sconnect-argocd", "runtime": "yaml",
		"resources": map[string]any{"argocd": map[string]any{"type": "k8sconnect:ManifestSet", "properties": map[string]any{
			"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
			"path":              file, "namespace": ns, "timeout": "3m",
		}}},
		"outputs": map[string]any{"objects": "${argocd.objects}"}})
	if err != nil {
		t.Fatal(err)
	}
	s := pulumitest.NewYAMLProgram(t, string(program))
	up := s.Run(pulumitest.Up, nil)
	expectChanges(t, up, map[string]int{"create": 2})
	objects, _ := up.Outputs["objects"].(map[string]any)
	if len(objects) != 59 {
		t.Fatalf("objects holds %d keys, want the bundle's 59", len(objects))
	}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	kept := map[string]string{
		"cm":     acctest.UID(t, configMaps, ns, "argocd-cmd-params-cm"),
		"server": acctest.UID(t, deployments, ns, "argocd-server"),
		"crd":    acctest.UID(t, crds, "", "applications.argoproj.io"),
	}
	acctest.MustGet(t, deployments, ns, "argocd-dex-server")
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})

	edited := vendorfiles.ArgoCDInsecure(t, docs)
	write(edited)
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"update": 1, "same": 1})
	if err := acctest.ConfigMapHas(t, ns, "argocd-cmd-params-cm", "server.insecure", "true"); err != nil {
		t.Error(err)
	}

	withoutDex, _ := vendorfiles.ArgoCDWithoutDex(t, edited)
	write(withoutDex)
	up = s.Run(pulumitest.Up, nil)
	expectChanges(t, up, map[string]int{"update": 1, "same": 1})
	if objects, _ := up.Outputs["objects"].(map[string]any); len(objects) != 53 {
		t.Errorf("objects holds %d keys after Dex was cut, want 53", len(objects))
	}
	acctest.MustNotExist(t, deployments, ns, "argocd-dex-server")
	for what, uid := range map[string]string{
		"cm":     acctest.UID(t, configMaps, ns, "argocd-cmd-params-cm"),
		"server": acctest.UID(t, deployments, ns, "argocd-server"),
		"crd":    acctest.UID(t, crds, "", "applications.argoproj.io"),
	} {
		if uid != kept[what] {
			t.Errorf("%s was replaced: UID %s -> %s", what, kept[what], uid)
		}
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})

	s.Run(pulumitest.Destroy, nil)
	acctest.MustNotExist(t, deployments, ns, "argocd-server")
	acctest.MustNotExist(t, crds, "", "applications.argoproj.io")
	acctest.MustNotExist(t, schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
		"", "argocd-server")
}
