package manifestset_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/bundles"
)

// A vendor's bundle shaped like prometheus-operator's (ten CRDs of 50-830
// KB, its Namespace, RBAC, operator and custom resources, 73 objects) is one
// set: created in one apply, its custom resources after their CRDs; quiet
// when nothing changed; a log level changed is one object's change, and a
// field deep in the largest CRD another; destroyed whole.
func TestAccManifestSet_vendorBundle(t *testing.T) {
	t.Parallel()
	name := strings.ToLower(acctest.Name("setbundle"))
	b := bundles.New(name)
	file := filepath.Join(t.TempDir(), "bundle.yaml")
	write := func(b *bundles.Bundle) {
		if err := os.WriteFile(file, []byte(b.YAML()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(b)
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "bundle", "path = \""+file+"\"", ""))
	w.Cleanup()
	w.MustApply()
	objects := w.StateAttribute("k8sconnect_manifest_set.bundle", "objects")
	if n := strings.Count(objects, "\"/"); n == 0 && !strings.Contains(objects, bundles.Group(name)) {
		t.Fatalf("objects should hold the bundle's objects:\n%.2000s", objects)
	}
	w.MustPlanNoChanges()

	write(b.WithLogLevel("debug"))
	r := w.Plan()
	if add, change, remove := r.Changes(); r.Err != nil || add+change+remove != 1 || change != 1 {
		t.Fatalf("a changed log level should plan one change: +%d ~%d -%d (%v)\n%.3000s", add, change, remove, r.Err, r.Output)
	}
	if human := w.Human("plan"); !strings.Contains(human.Output, `"debug"`) {
		t.Errorf("the plan should show the new log level:\n%.3000s", human.Output)
	}
	w.MustApply()
	w.MustPlanNoChanges()

	write(b.WithLogLevel("debug").WithWidenedCRD())
	r = w.Plan()
	if _, change, _ := r.Changes(); r.Err != nil || change != 1 {
		t.Fatalf("a field changed deep in a CRD should plan one change (%v):\n%.3000s", r.Err, r.Output)
	}
	w.MustApply()
	w.MustPlanNoChanges()
	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy of the bundle: %v\n%.3000s", r.Err, r.Output)
	}
}
