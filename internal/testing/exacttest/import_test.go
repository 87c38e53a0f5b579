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

// Import of an object kubectl applied: -generate-config-out writes every digit,
// and applying the generated yaml_body (with a cluster_connection added) takes
// the object over without changing a single stored value.
func TestAccExact_importKeepsEveryDigit(t *testing.T) {
	cluster := localcluster.Shared(t)
	exactcorpus.EnsureCRD(t, cluster.KubeconfigPath)
	ns := acctest.Namespace(t)
	limits := schemaOf(t, exactcorpus.Load(t, "corpus", ns), "int-limits")
	exactcorpus.Kubectl(t, cluster.KubeconfigPath, "apply", "--server-side", "-f",
		exactcorpus.Write(t, t.TempDir(), "", []exactcorpus.Doc{limits}))
	before := exactcorpus.Raw(t, cluster.RESTConfig(), limits.GVR(), ns, limits.Name)

	t.Setenv("KUBECONFIG", cluster.KubeconfigPath)
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf("import {\n  to = k8sconnect_object.limits\n  id = \"%s/Exact/%s/%s\"\n}\n", limits.APIVersion, ns, limits.Name))
	r := w.Run("plan", "-generate-config-out=generated.tf", "-input=false", "-json")
	b, err := os.ReadFile(filepath.Join(w.Dir(), "generated.tf"))
	if err != nil {
		t.Fatalf("no generated.tf (%v): %s", r.Err, r.Output)
	}
	gen := string(b)
	for _, want := range []string{"9007199254740993", "-9007199254740993", "9223372036854775807", "-9223372036854775808"} {
		if !strings.Contains(gen, want) {
			t.Errorf("generated config lacks %s:\n%s", want, gen)
		}
	}
	// The generated cluster_connection is all nulls (import reads $KUBECONFIG):
	// give it the test's connection.
	start := strings.Index(gen, "  cluster_connection = {")
	end := strings.Index(gen[start:], "\n  }\n")
	if start < 0 || end < 0 {
		t.Fatalf("no cluster_connection block in the generated config:\n%s", gen)
	}
	gen = gen[:start] + "  " + acctest.Connection(t) + gen[start+end+len("\n  }"):]
	if err := os.WriteFile(filepath.Join(w.Dir(), "generated.tf"), []byte(gen), 0o600); err != nil {
		t.Fatal(err)
	}
	w.Cleanup()
	w.MustApply()
	after := exactcorpus.Raw(t, cluster.RESTConfig(), limits.GVR(), ns, limits.Name)
	if diffs := exactcorpus.Diff(before, after); len(diffs) > 0 {
		t.Errorf("applying the generated config changed the object:\n  %s", strings.Join(diffs, "\n  "))
	}
	if fmt.Sprint(exactcorpus.Field(before, "metadata", "uid")) != fmt.Sprint(exactcorpus.Field(after, "metadata", "uid")) {
		t.Errorf("import replaced the object")
	}
	expectNoChanges(t, w, "after the import")
}
