package helmrelease_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// A chart whose ConfigMap sets a field the cluster's schema does not
// declare is refused at plan, naming the field, with nothing applied; with
// disable_openapi_validation the field is left out, the plan warning and
// naming it, as helm --disable-openapi-validation lets the server drop it,
// and the release installs. The warning is news once: the plan after the
// apply, which leaves out the same field, says nothing (before, every plan
// warned again). An upgrade that leaves out one more field warns of that one
// alone, and the plan after it is quiet again.
func TestAccHelmReleaseDisableOpenAPIValidation(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "lenient"
	config := func(more string) string {
		return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  %s
  %s
}
`, name, ns, chartPath(t, "unknownfield"), more, acctest.Connection(t))
	}
	w := acctest.NewWorkdir(t)
	w.Write(config(""))
	w.Cleanup()
	r := w.Plan()
	if r.Err == nil || !r.HasError("core/ConfigMap/"+ns+"/"+name+"-settings", ".color: field not declared in schema") {
		t.Fatalf("the unknown field should fail the plan, naming it: %v\n%s", r.Err, r.Output)
	}
	if got := recordStatuses(t, ns, name); len(got) != 0 {
		t.Errorf("a refused plan wrote release records: %v", got)
	}

	w.Write(config("disable_openapi_validation = true"))
	r = w.Plan()
	if r.Err != nil {
		t.Fatalf("plan with disable_openapi_validation: %v\n%s", r.Err, r.Output)
	}
	if ws := warningsNamed(r, "Fields the cluster does not know are left out"); len(ws) != 1 ||
		!strings.Contains(ws[0].Detail, "core/ConfigMap/"+ns+"/"+name+"-settings sets color,") {
		t.Errorf("the plan should warn once, naming the field left out: %v", r.Warnings())
	}
	w.MustApply()
	if err := configMapData(t, ns, name+"-settings", "greeting", "hello")(); err != nil {
		t.Error(err)
	}
	if got := acctest.MustGet(t, configMaps, ns, name+"-settings").GetLabels()["app"]; got != "lenient" {
		t.Errorf("the fields the schema knows should be applied, label app = %q", got)
	}
	expectQuietPlan(t, w, "after the install")

	w.Write(config("disable_openapi_validation = true\n  set = [{ name = \"size\", value = \"3\" }]"))
	r = w.Plan()
	if ws := warningsNamed(r, "Fields the cluster does not know are left out"); len(ws) != 1 ||
		!strings.Contains(ws[0].Detail, "core/ConfigMap/"+ns+"/"+name+"-settings sets size,") {
		t.Errorf("the upgrade's plan should warn once, naming only the field newly left out: %v", r.Warnings())
	}
	w.MustApply()
	expectQuietPlan(t, w, "after the upgrade")
}

// With skip_crds, a CRD of crds/ is neither applied nor checked: the fields
// disable_openapi_validation would leave out of it are not warned of, only
// those of the objects that are applied.
func TestAccHelmReleaseDisableOpenAPIValidationSkipsSkippedCRDs(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "lenientcrd"
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name                       = %q
  namespace                  = %q
  chart                      = %q
  skip_crds                  = true
  disable_openapi_validation = true
  %s
}
`, name, ns, chartPath(t, "unknownfield-crd"), acctest.Connection(t)))
	w.Cleanup()
	r := w.Plan()
	if r.Err != nil {
		t.Fatalf("plan: %v\n%s", r.Err, r.Output)
	}
	if ws := warningsNamed(r, "Fields the cluster does not know are left out"); len(ws) != 1 ||
		!strings.Contains(ws[0].Detail, "core/ConfigMap/"+ns+"/"+name+"-settings sets color,") {
		t.Errorf("the plan should warn of the ConfigMap's field alone, not of the skipped CRD's: %v", r.Warnings())
	}
	w.MustApply()
	expectQuietPlan(t, w, "after the install")
}
