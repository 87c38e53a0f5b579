package helmrelease_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// oneConfigMapConfig is a release of the one-configmap chart with more
// arguments.
func oneConfigMapConfig(t *testing.T, ns, name, more string) string {
	return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  %s
  %s
}
`, name, ns, chartPath(t, "one-configmap"), more, acctest.Connection(t))
}

// A release helm uninstalled keeping its history holds its name: the
// install is refused, saying that replace would install over it; with
// replace the plan warns, and the apply writes revision 2 over it, which
// helm lists as deployed, revision 1 superseded, as helm install --replace
// leaves them. A release whose latest revision is deployed is still
// refused with replace.
func TestAccHelmReleaseReplace(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "replaced"
	helmCLI(t, "install", name, chartPath(t, "one-configmap"), "-n", ns)
	helmCLI(t, "uninstall", name, "-n", ns, "--keep-history")

	w := acctest.NewWorkdir(t)
	w.Write(oneConfigMapConfig(t, ns, name, ""))
	w.Cleanup()
	r := w.Plan()
	if r.Err == nil || !r.HasError("already exists in the cluster (revision 1, uninstalled)", "Set replace = true") {
		t.Fatalf("without replace the install should be refused, pointing at replace: %v\n%s", r.Err, r.Output)
	}

	w.Write(oneConfigMapConfig(t, ns, name, "replace = true"))
	r = w.Plan()
	if r.Err != nil {
		t.Fatalf("plan with replace: %v\n%s", r.Err, r.Output)
	}
	if ws := warningsNamed(r, "Installing over a release"); len(ws) != 1 ||
		!strings.Contains(ws[0].Detail, "revision 1, uninstalled") || !strings.Contains(ws[0].Detail, "writes revision 2") {
		t.Errorf("the plan should warn once that it installs over revision 1, warns %v", r.Warnings())
	}
	if ws := warningsNamed(r, "Taking over a release made elsewhere"); len(ws) != 0 {
		t.Errorf("a replace is not an adoption's warning: %v", ws)
	}
	w.MustApply()
	if got := recordStatuses(t, ns, name); fmt.Sprint(got) != fmt.Sprint(map[string]string{"v1": "superseded", "v2": "deployed"}) {
		t.Errorf("records after the replace: %v, want v1 superseded and v2 deployed", got)
	}
	if err := configMapData(t, ns, name+"-settings", "greeting", "hello")(); err != nil {
		t.Error(err)
	}
	expectQuietPlan(t, w, "after the replace")

	// Another release, deployed by helm: replace does not install over it.
	other := "inuse"
	helmCLI(t, "install", other, chartPath(t, "one-configmap"), "-n", ns)
	w2 := acctest.NewWorkdir(t)
	w2.Write(oneConfigMapConfig(t, ns, other, "replace = true"))
	r = w2.Plan()
	if r.Err == nil || !r.HasError("already exists in the cluster (revision 1, deployed)") {
		t.Errorf("replace should not install over a deployed release: %v\n%s", r.Err, r.Output)
	}
}
