package object_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/bundles"
)

var crds = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// bigCRD writes a generated CRD of size bytes of YAML to crd.yaml in w and
// returns its name, the same CRD with one int32 property deep inside widened
// to int64, and that property's name.
func bigCRD(t *testing.T, w *acctest.Workdir, size int) (name, widened, field string) {
	t.Helper()
	group := acctest.Name("big") + ".k8sconnect.test"
	crd := bundles.CRD(group, "Big", size)
	widened, field = bundles.WidenDeepestInt32(crd)
	if field == "" {
		t.Fatal("the generated CRD has no int32 property to widen")
	}
	writeFile(t, w, "crd.yaml", crd)
	t.Cleanup(func() {
		_ = acctest.Dynamic(t).Resource(crds).Delete(context.Background(), "bigs."+group, metav1.DeleteOptions{})
	})
	return "bigs." + group, widened, field
}

func writeFile(t *testing.T, w *acctest.Workdir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.Dir(), name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// One field changed deep inside an 830 KB CRD, read through
// k8sconnect_yaml_split: the plan shows that field alone, in yaml_body and in
// the projection, with every owner known, and no warning; the apply changes
// it in place. As multi-line YAML the same plan took Terraform 50 s and
// 4.4 GB (docs/adr/0011-bodies-as-json.md).
func TestAccObject_oneFieldDeepInsideALargeCRDPlansAlone(t *testing.T) {
	w := acctest.NewWorkdir(t)
	name, widened, field := bigCRD(t, w, 830_000)
	w.Write(fmt.Sprintf(`
data "k8sconnect_yaml_split" "crd" {
  pattern = "${path.module}/crd.yaml"
}

resource "k8sconnect_object" "crd" {
  yaml_body = data.k8sconnect_yaml_split.crd.manifests["apiextensions.k8s.io/CustomResourceDefinition/%s"]
  %s
}
`, name, acctest.Connection(t)))
	w.Cleanup()
	w.MustApply()
	uid := acctest.UID(t, crds, "", name)

	writeFile(t, w, "crd.yaml", widened)
	plan := w.Run("plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !exitedWith(plan.Err, 2) {
		t.Fatalf("%s plan: want exit code 2 (changes), got %v\n%.3000s", acctest.Engine(), plan.Err, plan.Output)
	}
	changes := regexp.MustCompile(`(?m)^\s*[-+~] .*= .*->.*$`).FindAllString(plan.Output, -1) // not OpenTofu's legend
	widening := regexp.MustCompile(`~ format\s+= "int32" -> "int64"`)
	if len(changes) != 2 || !widening.MatchString(changes[0]) || !widening.MatchString(changes[1]) {
		t.Errorf("plan shows %d changed values, want the widened format twice (yaml_body, projection):\n%s",
			len(changes), strings.Join(changes, "\n"))
	}
	if !strings.Contains(plan.Output, "~ "+field+" ") {
		t.Errorf("plan does not name the changed property %s", field)
	}
	for _, unwanted := range []string{"known after apply", "A long yaml_body"} {
		if strings.Contains(plan.Output, unwanted) {
			t.Errorf("plan output holds %q", unwanted)
		}
	}
	if lines := strings.Count(plan.Output, "\n"); lines > 400 {
		t.Errorf("plan output is %d lines for one changed field", lines)
	}

	w.MustApply()
	live := acctest.MustGet(t, crds, "", name)
	if got := bundles.PropertyFormat(live.Object, field); got != "int64" {
		t.Errorf("%s in the cluster has format %q, want int64", field, got)
	}
	if got := string(live.GetUID()); got != uid {
		t.Errorf("the CRD was replaced: UID %s, was %s", got, uid)
	}
	w.MustPlanNoChanges()
}

// The same change in a long body written as YAML: Terraform and OpenTofu will
// show it as a line diff, and the plan says what that costs and which data
// source key gives the object as JSON. A short YAML body that changes too
// gets no such warning.
func TestAccObject_longYAMLBodyChangeWarnsOfTheLineDiff(t *testing.T) {
	ns := acctest.Namespace(t)
	w := acctest.NewWorkdir(t)
	name, widened, _ := bigCRD(t, w, 150_000)
	config := func(mode string) string {
		return fmt.Sprintf(`
resource "k8sconnect_object" "crd" {
  yaml_body = file("${path.module}/crd.yaml")
  %[1]s
}

resource "k8sconnect_object" "settings" {
  yaml_body = <<-EOT
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings, namespace: %[2]s}
    data: {mode: %[3]s}
  EOT
  %[1]s
}
`, acctest.Connection(t), ns, mode)
	}
	w.Write(config("safe"))
	w.Cleanup()
	w.MustApply()

	writeFile(t, w, "crd.yaml", widened)
	w.Write(config("fast"))
	plan := w.Plan()
	if plan.Err != nil {
		t.Fatalf("plan: %v\n%s", plan.Err, plan.Output)
	}
	var warnings []acctest.Diagnostic
	for _, d := range plan.Diagnostics {
		if d.Summary == "A long yaml_body makes a slow plan" {
			warnings = append(warnings, d)
		}
	}
	if len(warnings) != 1 {
		t.Fatalf("%d line-diff warnings, want 1 (the CRD's, not the ConfigMap's): %+v", len(warnings), plan.Diagnostics)
	}
	key := fmt.Sprintf(`manifests["apiextensions.k8s.io/CustomResourceDefinition/%s"]`, name)
	for _, want := range []string{"CustomResourceDefinition " + name, "k8sconnect_yaml_split", key} {
		if !strings.Contains(warnings[0].Detail, want) {
			t.Errorf("warning does not say %q:\n%s", want, warnings[0].Detail)
		}
	}
	if warnings[0].Severity != "warning" {
		t.Errorf("severity %q, want warning", warnings[0].Severity)
	}
}

// exitedWith reports whether err is a run that exited with code.
func exitedWith(err error, code int) bool {
	var exit *exec.ExitError
	if code == 0 {
		return err == nil
	}
	return errors.As(err, &exit) && exit.ExitCode() == code
}
