package helmrelease_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/bundles"
	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
)

// A chart that ships a 300 KB CRD in crds/: the release's objects map holds
// the CRD's spec.versions by its length and digest, not a second copy of the
// schema (docs/adr/0015-large-values-by-digest.md). When someone changes one
// field deep inside it, the plan warns which field, the value found and the
// value the apply restores, and the apply restores it without replacing the
// CRD.
func TestAccHelmReleaseLargeCRDKeptByDigest(t *testing.T) {
	ns := acctest.Namespace(t)
	group := strings.ToLower(acctest.Name("bigchart")) + ".k8sconnect.test"
	name := "bigs." + group
	crd := bundles.CRD(group, "Big", 300_000)
	widened, field := bundles.WidenDeepestInt32(crd)
	if field == "" {
		t.Fatal("the generated CRD has no int32 property to widen")
	}
	t.Cleanup(func() {
		_ = acctest.Dynamic(t).Resource(crds).Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	w := acctest.NewWorkdir(t)
	c := chartrepo.Chart("big", "1.0.0")
	c.Files = append(c.Files, &common.File{Name: "crds/big.yaml", ModTime: time.Unix(0, 0), Data: []byte(crd)})
	if _, err := chartrepo.WriteDir(c, w.Dir(), nil); err != nil {
		t.Fatal(err)
	}
	w.Write(fmt.Sprintf(`
resource "k8sconnect_helm_release" "big" {
  name      = "big"
  namespace = %q
  chart     = "${path.module}/big"
  wait      = false
  %s
}
`, ns, acctest.Connection(t)))
	w.Cleanup()
	w.MustApply()
	uid := acctest.UID(t, crds, "", name)

	var objects map[string]map[string]string
	raw := w.StateAttribute("k8sconnect_helm_release.big", "objects")
	if err := json.Unmarshal([]byte(raw), &objects); err != nil {
		t.Fatalf("objects in state: %v\n%.300s", err, raw)
	}
	key := "apiextensions.k8s.io/CustomResourceDefinition/" + name
	if v := objects[key]["spec.versions"]; !regexp.MustCompile(`^\(\d{6} bytes, sha256:[0-9a-f]{64}\)$`).MatchString(v) {
		t.Errorf("objects[%q][\"spec.versions\"] is %.100q (%d bytes), want its length and digest", key, v, len(v))
	}
	if state, err := os.ReadFile(filepath.Join(w.Dir(), "terraform.tfstate")); err == nil && len(state) > 100_000 {
		t.Errorf("the state is %d bytes: the 300 KB CRD is in it although the release's inputs do not hold it", len(state))
	}

	acctest.PatchAs(t, "someone-else", crds, "", name, bundles.VersionsPatch(widened))
	plan := w.Plan()
	if plan.Err != nil {
		t.Fatalf("plan: %v\n%s", plan.Err, plan.Output)
	}
	var detail string
	for _, d := range plan.Diagnostics {
		if d.Summary == "A large value changes" {
			detail = d.Detail
		}
	}
	for _, want := range []string{"objects holds spec.versions of " + key, "(1 in all)", field, `format: "int64" -> "int32"`} {
		if !strings.Contains(detail, want) {
			t.Errorf("the plan's warning does not say %q: %q", want, detail)
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
