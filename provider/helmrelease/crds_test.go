package helmrelease_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// crdChart is a chart in a directory of its own whose crds/ directory holds
// one CRD, widgets.<group>, of a group no other test uses (CRDs are
// cluster-wide and outlive their release), with the properties props in its
// schema; its one template is a ConfigMap.
type crdChart struct {
	t     *testing.T
	dir   string
	group string
}

func newCRDChart(t *testing.T) *crdChart {
	c := &crdChart{t: t, dir: t.TempDir(), group: strings.ToLower(acctest.Name("crd")) + ".k8sconnect.test"}
	t.Cleanup(func() {
		_ = acctest.Dynamic(t).Resource(crds).Delete(context.Background(), c.name(), metav1.DeleteOptions{})
	})
	return c
}

func (c *crdChart) name() string { return "widgets." + c.group }

// key is the CRD's key in objects.
func (c *crdChart) key() string { return "apiextensions.k8s.io/CustomResourceDefinition/" + c.name() }

// crd is the CRD with props (name: type) in its spec's schema.
func (c *crdChart) crd(props ...string) string {
	var b strings.Builder
	for _, p := range props {
		name, typ, _ := strings.Cut(p, ":")
		fmt.Fprintf(&b, "                %s: {type: %s}\n", name, typ)
	}
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s
spec:
  group: %[2]s
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
%[3]s`, c.name(), c.group, b.String())
}

// write writes the chart with its CRD's properties props.
func (c *crdChart) write(props ...string) {
	writeChart(c.t, c.dir, map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: widgets\nversion: 1.0.0\n",
		"crds/widgets.yaml": c.crd(props...),
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata: {greeting: hi}\n",
	})
}

// create makes the CRD with props as manager would, before any release.
func (c *crdChart) create(manager string, annotations map[string]string, props ...string) {
	c.t.Helper()
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(c.crd(props...)), &obj.Object); err != nil {
		c.t.Fatal(err)
	}
	obj.SetAnnotations(annotations)
	if _, err := acctest.Dynamic(c.t).Resource(crds).Create(context.Background(), &obj, metav1.CreateOptions{FieldManager: manager}); err != nil {
		c.t.Fatalf("creating %s as %s: %v", c.name(), manager, err)
	}
}

// properties are the properties of the live CRD's spec schema.
func (c *crdChart) properties() []string {
	c.t.Helper()
	obj := acctest.MustGet(c.t, crds, "", c.name())
	versions, _, _ := unstructured.NestedSlice(obj.Object, "spec", "versions")
	if len(versions) == 0 {
		c.t.Fatalf("%s has no versions", c.name())
	}
	props, _, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties")
	var out []string
	for p := range props {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// specManagers are the field managers that own fields of the live CRD's
// versions (its schemas): those the chart sets. A field the server defaulted
// (spec.conversion) stays with the manager that created the CRD.
func (c *crdChart) specManagers() []string {
	c.t.Helper()
	obj := acctest.MustGet(c.t, crds, "", c.name())
	var out []string
	for _, e := range obj.GetManagedFields() {
		if e.Subresource == "" && e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.GetRawBytes()), `"f:versions"`) {
			out = append(out, e.Manager)
		}
	}
	slices.Sort(out)
	return out
}

// fingerprint is what of the live CRD a release could change: its spec,
// its annotations and who manages it (not status, which the server writes).
func (c *crdChart) fingerprint() string {
	c.t.Helper()
	obj := acctest.MustGet(c.t, crds, "", c.name())
	var managed []string
	for _, e := range obj.GetManagedFields() {
		if e.Subresource == "" && e.FieldsV1 != nil {
			managed = append(managed, e.Manager+":"+string(e.FieldsV1.GetRawBytes()))
		}
	}
	b, err := json.Marshal([]any{obj.Object["spec"], obj.GetAnnotations(), managed})
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b)
}

// config is the release of the chart, named name in ns, with extra arguments.
func (c *crdChart) config(ns, name, extra string) string {
	return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  timeout   = "60s"
  %s
  %s
}
`, name, ns, c.dir, extra, acctest.Connection(c.t))
}

// warningsNamed are the plan's or apply's warnings with summary.
func warningsNamed(r acctest.Result, summary string) []acctest.Diagnostic {
	var out []acctest.Diagnostic
	for _, d := range r.Warnings() {
		if d.Summary == summary {
			out = append(out, d)
		}
	}
	return out
}

// expectQuietPlan fails the test unless a plan shows no change and no warning.
func expectQuietPlan(t *testing.T, w *acctest.Workdir, when string) {
	t.Helper()
	r := w.Plan()
	if add, change, remove := r.Changes(); r.Err != nil || add+change+remove != 0 {
		t.Fatalf("%s: the plan should show no change, has +%d ~%d -%d (%v)\n%s", when, add, change, remove, r.Err, r.Output)
	}
	if ws := r.Warnings(); len(ws) > 0 {
		t.Errorf("%s: the plan should warn of nothing, warns %v", when, ws)
	}
}

// A release helm installed, whose chart has a CRD in crds/ (which helm
// creates without the release's marks), is imported and taken over: the
// adoption's plan warns once that the CRD is taken over from helm, the apply
// puts it in objects with helm's field manager no longer holding its spec,
// the next plan is quiet, and a change to the chart's CRD upgrades it, as
// helm never would.
func TestAccHelmReleaseTakesOverTheCRDsOfAnAdoptedRelease(t *testing.T) {
	t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
	ns := acctest.Namespace(t)
	name := "adoptcrd"
	chart := newCRDChart(t)
	chart.write("size:string")
	helmCLI(t, "install", name, chart.dir, "-n", ns)
	if got := chart.specManagers(); !slices.Equal(got, []string{"helm"}) {
		t.Fatalf("helm install should have made the CRD under its field manager, spec managers %v", got)
	}

	w := acctest.NewWorkdir(t)
	config := chart.config(ns, name, "")
	w.Write(fmt.Sprintf(`
import {
  to = k8sconnect_helm_release.app
  id = "%s/%s"
}
`, ns, name) + config)
	w.Cleanup()
	plan := w.Plan()
	if plan.Err != nil {
		t.Fatalf("plan of the adoption: %v\n%s", plan.Err, plan.Output)
	}
	if ws := warningsNamed(plan, "Taking over a CRD of the chart"); len(ws) != 1 || !strings.Contains(ws[0].Detail, chart.name()) ||
		!strings.Contains(ws[0].Detail, "made by helm") || !strings.Contains(ws[0].Detail, "Its spec is the chart's already") {
		t.Errorf("the adoption's plan should warn once that the CRD is taken over from helm, warns %v", plan.Warnings())
	}
	w.MustApply()
	if objects := w.StateAttribute("k8sconnect_helm_release.app", "objects"); !strings.Contains(objects, chart.key()) {
		t.Errorf("objects should hold the CRD %s after the adoption:\n%s", chart.key(), objects)
	}
	if got := chart.specManagers(); !slices.Equal(got, []string{"k8sconnect"}) {
		t.Errorf("the CRD's spec should be k8sconnect's alone after the adoption, managers %v", got)
	}
	expectQuietPlan(t, w, "after the adoption")

	chart.write("size:string", "color:string")
	if add, change, remove := w.Plan().Changes(); add != 0 || change != 1 || remove != 0 {
		t.Errorf("a changed CRD of crds/ should plan an update of the release, plans +%d ~%d -%d", add, change, remove)
	}
	w.MustApply()
	if got := chart.properties(); !slices.Equal(got, []string{"color", "size"}) {
		t.Errorf("the CRD was not upgraded with the chart: properties %v", got)
	}
	expectQuietPlan(t, w, "after the CRD's upgrade")
}

// A CRD of crds/ made beforehand with kubectl (as charts' install notes often
// ask) is taken over by the release that installs the chart, with a warning
// that names kubectl's manager and says that the spec changes; the apply
// gives it the chart's spec and the fields kubectl held to k8sconnect, and
// the next plan is quiet.
func TestAccHelmReleaseTakesOverACRDMadeWithKubectl(t *testing.T) {
	ns := acctest.Namespace(t)
	chart := newCRDChart(t)
	chart.write("size:string", "color:string")
	chart.create("kubectl-client-side-apply", nil, "size:string")

	w := acctest.NewWorkdir(t)
	w.Write(chart.config(ns, "bykubectl", ""))
	w.Cleanup()
	plan := w.Plan()
	if plan.Err != nil {
		t.Fatalf("plan: %v\n%s", plan.Err, plan.Output)
	}
	if ws := warningsNamed(plan, "Taking over a CRD of the chart"); len(ws) != 1 ||
		!strings.Contains(ws[0].Detail, "made by kubectl-client-side-apply") || !strings.Contains(ws[0].Detail, "changes its spec") {
		t.Errorf("the plan should warn that the CRD is taken over from kubectl and changed, warns %v", plan.Warnings())
	}
	w.MustApply()
	if got := chart.properties(); !slices.Equal(got, []string{"color", "size"}) {
		t.Errorf("the CRD should have the chart's spec, properties %v", got)
	}
	if got := chart.specManagers(); !slices.Equal(got, []string{"k8sconnect"}) {
		t.Errorf("the CRD's spec should be k8sconnect's alone, managers %v", got)
	}
	expectQuietPlan(t, w, "after the takeover")
}

// A CRD of crds/ that someone else holds is refused at plan, naming the
// holder, and nothing is installed: a k8sconnect_object (its id), and an
// operator (a field manager that owns its spec). With
// skip_crds the same chart installs, leaving that CRD exactly as it was.
func TestAccHelmReleaseRefusesACRDHeldBySomeoneElse(t *testing.T) {
	for _, c := range []struct {
		name   string
		holder func(t *testing.T, ns string, chart *crdChart) string // makes the CRD, returns the holder's words
	}{
		{"a-k8sconnect-object", func(t *testing.T, ns string, chart *crdChart) string {
			chart.create("k8sconnect", map[string]string{"k8sconnect.io/owned-by": "k8sconnect_object.crd"}, "size:string")
			return "the k8sconnect resource k8sconnect_object.crd"
		}},
		{"operator", func(t *testing.T, ns string, chart *crdChart) string {
			chart.create("widget-operator", nil, "size:string")
			return "no Helm release (made by widget-operator)"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
			ns := acctest.Namespace(t)
			chart := newCRDChart(t)
			chart.write("size:string", "color:string")
			holder := c.holder(t, ns, chart)
			before := chart.fingerprint()

			w := acctest.NewWorkdir(t)
			w.Write(chart.config(ns, "mine", ""))
			w.Cleanup()
			r := w.Apply()
			w.MustFail(r, "apply of a chart whose crds/ CRD someone else holds")
			if !r.HasError(chart.key(), "belongs to "+holder, "skip_crds") {
				t.Errorf("the plan should refuse the CRD naming %q:\n%s", holder, r.Output)
			}
			if got := chart.fingerprint(); got != before {
				t.Errorf("the refused CRD was changed:\n%s\n->\n%s", before, got)
			}
			if got := recordStatuses(t, ns, "mine"); len(got) != 0 {
				t.Errorf("a refused plan wrote release records: %v", got)
			}
			if err := present(t, configMaps, ns, "mine-settings", false)(); err != nil {
				t.Error(err)
			}

			w.Write(chart.config(ns, "mine", "skip_crds = true"))
			w.MustApply()
			if got := chart.fingerprint(); got != before {
				t.Errorf("skip_crds changed the CRD:\n%s\n->\n%s", before, got)
			}
			if objects := w.StateAttribute("k8sconnect_helm_release.app", "objects"); strings.Contains(objects, chart.key()) {
				t.Errorf("objects should not hold the CRD under skip_crds:\n%s", objects)
			}
			if err := configMapData(t, ns, "mine-settings", "greeting", "hi")(); err != nil {
				t.Error(err)
			}
			expectQuietPlan(t, w, "with skip_crds")
		})
	}
}

// Two releases of one chart share the CRDs of its crds/ directory, as under
// helm: the release that installed a CRD holds it; another leaves it to that
// one, with a warning at its install and at every plan while its own chart's
// CRD differs from the live one: the CRD is not in its objects and never
// changed by it, and its other plans are quiet. Once the holder is
// uninstalled (the CRD outlives it), the next apply takes it over.
func TestAccHelmReleaseLeavesACRDToAnotherRelease(t *testing.T) {
	t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
	ns := acctest.Namespace(t)
	chart := newCRDChart(t)
	chart.write("size:string")
	first := acctest.NewWorkdir(t)
	first.Write(chart.config(ns, "first", ""))
	first.Cleanup()
	first.MustApply()
	held := chart.fingerprint()
	holder := "Helm release " + ns + "/first"

	second := acctest.NewWorkdir(t)
	second.Write(chart.config(ns, "second", ""))
	second.Cleanup()
	r := second.Plan()
	if ws := warningsNamed(r, "A CRD of the chart belongs to another release"); len(ws) != 1 ||
		!strings.Contains(ws[0].Detail, holder) || !strings.Contains(ws[0].Detail, "this chart's already") {
		t.Errorf("the install should warn once that %s holds the CRD, warns %v", holder, r.Warnings())
	}
	second.MustApply()
	if got := chart.fingerprint(); got != held {
		t.Errorf("the second release changed the CRD:\n%s\n->\n%s", held, got)
	}
	if objects := second.StateAttribute("k8sconnect_helm_release.app", "objects"); strings.Contains(objects, chart.key()) {
		t.Errorf("the second release's objects should not hold the CRD:\n%s", objects)
	}
	if err := configMapData(t, ns, "second-settings", "greeting", "hi")(); err != nil {
		t.Error(err)
	}
	expectQuietPlan(t, second, "after the install beside the holder")

	// The second release's chart brings a newer CRD: the holder's stays.
	newer := &crdChart{t: t, dir: t.TempDir(), group: chart.group}
	newer.write("size:string", "color:string")
	second.Write(newer.config(ns, "second", ""))
	r = second.Plan()
	if ws := warningsNamed(r, "A CRD of the chart belongs to another release"); len(ws) != 1 ||
		!strings.Contains(ws[0].Detail, "not this chart's") {
		t.Errorf("a chart whose CRD differs should be warned that the holder's CRD stays, warns %v", r.Warnings())
	}
	second.MustApply()
	if got := chart.fingerprint(); got != held {
		t.Errorf("the second release changed the CRD with its chart:\n%s\n->\n%s", held, got)
	}

	// The holder goes; the CRD stays, and the second release takes it over.
	if r := first.Destroy(); r.Err != nil {
		t.Fatalf("destroy of the first release: %v\n%s", r.Err, r.Output)
	}
	r = second.Plan()
	if ws := warningsNamed(r, "Taking over a CRD of the chart"); len(ws) != 1 || !strings.Contains(ws[0].Detail, ns+"/first, which has been uninstalled") {
		t.Errorf("the plan after the holder's uninstall should warn of the takeover, warns %v\n%s", r.Warnings(), r.Output)
	}
	second.MustApply()
	if objects := second.StateAttribute("k8sconnect_helm_release.app", "objects"); !strings.Contains(objects, chart.key()) {
		t.Errorf("the second release's objects should hold the CRD after the takeover:\n%s", objects)
	}
	if got := strings.Join(chart.properties(), " "); got != "color size" {
		t.Errorf("the CRD taken over should have the second chart's properties, has %q", got)
	}
	expectQuietPlan(t, second, "after the takeover")
}

// Two releases of one chart installed at the same moment both plan to
// create its crds/ CRD; one creates it, and the other never applies it over
// the first: its apply either finds it made already (and leaves it to the
// first) or fails saying another made it meanwhile, and then converges. In
// the end exactly one release holds the CRD, its marks name that one, and
// neither release's plan changes anything (no flip-flop of the marks).
func TestAccHelmReleaseInstallsRacingForACRD(t *testing.T) {
	t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
	ns := acctest.Namespace(t)
	chart := newCRDChart(t)
	chart.write("size:string")
	names := []string{"left", "right"}
	dirs := make([]*acctest.Workdir, len(names))
	results := make([]acctest.Result, len(names))
	for i, name := range names {
		dirs[i] = acctest.NewWorkdir(t)
		dirs[i].Write(chart.config(ns, name, ""))
		dirs[i].Cleanup()
		dirs[i].Plan() // the providers are ready, so that the applies start together
	}
	var wg sync.WaitGroup
	for i := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = dirs[i].Apply()
		}()
	}
	wg.Wait()
	for i, r := range results {
		// Terraform plans again just before it applies: the release that
		// lost the race finds the CRD another's then, and Terraform itself
		// refuses the plan whose CRD "vanished" before anything is applied.
		lost := r.HasError(chart.key(), "someone else made or changed it while this apply ran", "Apply again") ||
			r.HasError(chart.key(), "has vanished")
		if r.Err != nil && !lost {
			t.Fatalf("release %s failed otherwise than losing the race for the CRD: %v\n%v", names[i], r.Err, r.Errors())
		}
		if r.Err != nil {
			dirs[i].MustApply()
		}
	}
	live := acctest.MustGet(t, crds, "", chart.name())
	holder := live.GetAnnotations()["meta.helm.sh/release-name"]
	var holders []string
	for i, name := range names {
		if strings.Contains(dirs[i].StateAttribute("k8sconnect_helm_release.app", "objects"), chart.key()) {
			holders = append(holders, name)
		}
		if err := configMapData(t, ns, name+"-settings", "greeting", "hi")(); err != nil {
			t.Error(err)
		}
	}
	if len(holders) != 1 || holders[0] != holder {
		t.Errorf("exactly the release the CRD's marks name (%q) should hold it, held by %v", holder, holders)
	}
	for i, name := range names {
		r := dirs[i].Plan()
		if add, change, remove := r.Changes(); r.Err != nil || add+change+remove != 0 {
			t.Errorf("release %s: the plan after the race should change nothing, has +%d ~%d -%d (%v)\n%s",
				name, add, change, remove, r.Err, r.Output)
		}
	}
}

// skip_crds leaves the CRDs of crds/ out of an install, as helm install
// --skip-crds: the CRD is not created and not in objects.
func TestAccHelmReleaseSkipCRDs(t *testing.T) {
	ns := acctest.Namespace(t)
	chart := newCRDChart(t)
	chart.write("size:string")
	w := acctest.NewWorkdir(t)
	w.Write(chart.config(ns, "skipped", "skip_crds = true"))
	w.Cleanup()
	w.MustApply()
	if err := present(t, crds, "", chart.name(), false)(); err != nil {
		t.Error(err)
	}
	if objects := w.StateAttribute("k8sconnect_helm_release.app", "objects"); strings.Contains(objects, chart.key()) {
		t.Errorf("objects should not hold the CRD under skip_crds:\n%s", objects)
	}
	expectQuietPlan(t, w, "with skip_crds")
}
