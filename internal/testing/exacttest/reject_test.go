package exacttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/exactcorpus"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// What kubectl refuses, k8sconnect refuses too, at plan, with nothing applied:
// numbers JSON cannot hold (.inf, .nan) and a DEL character, which the API
// server's YAML reading of an apply body rejects.
func TestAccExact_refusedLikeKubectl(t *testing.T) {
	cluster := localcluster.Shared(t)
	exactcorpus.EnsureCRD(t, cluster.KubeconfigPath)
	ns := acctest.Namespace(t)
	bad := map[string]string{
		"inf": "spec:\n  free: {x: .inf}\n",
		"nan": "spec:\n  free: {x: .nan}\n",
		"del": "spec:\n  free: {x: \"a\\x7fb\"}\n",
	}
	w := acctest.NewWorkdir(t)
	dir := filepath.Join(w.Dir(), "objects")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, spec := range bad {
		doc := fmt.Sprintf("apiVersion: %s/v1\nkind: Exact\nmetadata:\n  name: %s\n  namespace: %s\n%s", exactcorpus.Group, name, ns, spec)
		file := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		out := exactcorpus.KubectlFails(t, cluster.KubeconfigPath, "apply", "--server-side", "-f", file)
		t.Logf("kubectl refuses %s: %s", name, strings.TrimSpace(out))
	}
	w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "doc" {
  for_each  = fileset("${path.module}/objects", "*.yaml")
  yaml_body = file("${path.module}/objects/${each.value}")
  %s
}
`, acctest.Connection(t)))
	r := w.Plan()
	w.MustFail(r, "plan of documents kubectl refuses")
	for name := range bad {
		errorLine := false
		for _, line := range strings.Split(r.Output, "\n") {
			if strings.Contains(line, `"severity":"error"`) && strings.Contains(line, `k8sconnect_object.doc[\"`+name+`.yaml\"]`) {
				errorLine = true
			}
		}
		if !errorLine {
			t.Errorf("no plan error for %s.yaml", name)
		}
		gvr := exactcorpus.Doc{APIVersion: exactcorpus.Group + "/v1", Kind: "Exact"}.GVR()
		if obj, err := acctest.Get(t, gvr, ns, name); err != nil || obj != nil {
			t.Errorf("%s is in the cluster after a failed plan (err=%v)", name, err)
		}
	}
	for _, d := range r.Diagnostics {
		t.Logf("%s: %s: %s", d.Severity, d.Summary, d.Detail)
	}
	if n := strings.Count(r.Output, `"severity":"error"`); n != len(bad) {
		t.Errorf("%d errors, want one per document (%d)", n, len(bad))
	}
}
