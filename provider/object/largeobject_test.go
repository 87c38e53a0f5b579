package object_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
// k8sconnect_yaml_split: the plan shows that field alone in yaml_body, and in
// managed_state_projection the change of spec.versions' digest, the value
// being too large to keep in state twice (docs/adr/0015-large-values-by-digest.md);
// a warning names the field the apply changes inside it. Every owner is
// known; the apply changes the field in place. As multi-line YAML the same
// plan took Terraform 50 s and 4.4 GB (docs/adr/0011-bodies-as-json.md).
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
	before := versionsInState(t, w)

	writeFile(t, w, "crd.yaml", widened)
	plan := w.Run("plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !exitedWith(plan.Err, 2) {
		t.Fatalf("%s plan: want exit code 2 (changes), got %v\n%.3000s", acctest.Engine(), plan.Err, plan.Output)
	}
	changes := regexp.MustCompile(`(?m)^\s*[-+~] .*= .*->.*$`).FindAllString(plan.Output, -1) // not OpenTofu's legend
	widening := regexp.MustCompile(`~ format\s+= "int32" -> "int64"`)
	digest := regexp.MustCompile(`~ "spec\.versions"\s+= "\(\d+ bytes, sha256:[0-9a-f]{64}\)" -> "\(\d+ bytes, sha256:[0-9a-f]{64}\)"`)
	slices.SortFunc(changes, func(a, b string) int { return strings.Compare(strings.TrimSpace(a), strings.TrimSpace(b)) })
	if len(changes) != 2 || !digest.MatchString(changes[0]) || !widening.MatchString(changes[1]) {
		t.Errorf("plan shows %d changed values, want the widened format (yaml_body) and the digest of spec.versions:\n%s",
			len(changes), strings.Join(changes, "\n"))
	}
	if !strings.Contains(plan.Output, "~ "+field+" ") {
		t.Errorf("plan does not name the changed property %s", field)
	}
	if !strings.Contains(plan.Output, "A large value changes") || !strings.Contains(plan.Output, `format: "int32" -> "int64"`) {
		t.Errorf("plan does not warn which field changes inside spec.versions:\n%.3000s", plan.Output)
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
	if after := versionsInState(t, w); after == before {
		t.Errorf("the digest of spec.versions in state did not change with the value: %s", after)
	}
	w.MustPlanNoChanges()
}

// versionsInState is managed_state_projection["spec.versions"] of the CRD in
// state, which must be its stand-in: 450 KB of JSON kept once, in yaml_body.
func versionsInState(t *testing.T, w *acctest.Workdir) string {
	t.Helper()
	var projection map[string]string
	raw := w.StateAttribute("k8sconnect_object.crd", "managed_state_projection")
	if err := json.Unmarshal([]byte(raw), &projection); err != nil {
		t.Fatalf("managed_state_projection in state: %v\n%.300s", err, raw)
	}
	v := projection["spec.versions"]
	if !regexp.MustCompile(`^\(\d{6} bytes, sha256:[0-9a-f]{64}\)$`).MatchString(v) {
		t.Errorf("spec.versions in state is %.100q (%d bytes), want its length and digest", v, len(v))
	}
	return v
}

// Someone changes one field deep inside a large CRD that k8sconnect applied:
// the plan shows the digest of spec.versions change back and warns which
// field, with the value found and the value the apply restores; the apply
// restores it without replacing the CRD.
func TestAccObject_driftDeepInsideALargeCRDIsNamed(t *testing.T) {
	w := acctest.NewWorkdir(t)
	name, widened, field := bigCRD(t, w, 300_000)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "crd" {
  yaml_body = jsonencode(yamldecode(file("${path.module}/crd.yaml")))
  %s
}
`, acctest.Connection(t)))
	w.Cleanup()
	w.MustApply()
	uid := acctest.UID(t, crds, "", name)

	// The widened CRD, as someone else's tool would write it.
	acctest.PatchAs(t, "someone-else", crds, "", name, bundles.VersionsPatch(widened))

	plan := w.Plan()
	if plan.Err != nil {
		t.Fatalf("plan: %v\n%s", plan.Err, plan.Output)
	}
	var warning *acctest.Diagnostic
	for i, d := range plan.Diagnostics {
		if d.Summary == "A large value changes" {
			warning = &plan.Diagnostics[i]
		}
	}
	if warning == nil {
		t.Fatalf("no warning names the field that drifted: %+v", plan.Diagnostics)
	}
	for _, want := range []string{"spec.versions of CustomResourceDefinition " + name, "(1 in all)",
		field, `format: "int64" -> "int32"`} {
		if !strings.Contains(warning.Detail, want) {
			t.Errorf("warning does not say %q:\n%s", want, warning.Detail)
		}
	}
	w.MustApply()
	live := acctest.MustGet(t, crds, "", name)
	if got := bundles.PropertyFormat(live.Object, field); got != "int32" {
		t.Errorf("%s in the cluster has format %q after the apply, want int32 restored", field, got)
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
