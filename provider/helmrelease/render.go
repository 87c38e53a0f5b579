package helmrelease

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	release "helm.sh/helm/v4/pkg/release/v1"
	relutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// Helm's ownership marks. Helm refuses to upgrade over an object that lacks
// them or names another release, so every object of the release carries them
// and `helm upgrade`, `rollback` and `uninstall` accept the release as theirs.
const (
	labelManagedBy           = "app.kubernetes.io/managed-by"
	annotationReleaseName    = objectplan.AnnotationHelmReleaseName
	annotationReleaseNS      = objectplan.AnnotationHelmReleaseNamespace
	annotationResourcePolicy = "helm.sh/resource-policy"
)

// helmMarks are the paths of those marks: never shown in objects (every
// object has them, they say nothing a user asked for).
var helmMarks = []objectpath.Path{
	{objectpath.Field("metadata"), objectpath.Field("labels"), objectpath.Field(labelManagedBy)},
	{objectpath.Field("metadata"), objectpath.Field("annotations"), objectpath.Field(annotationReleaseName)},
	{objectpath.Field("metadata"), objectpath.Field("annotations"), objectpath.Field(annotationReleaseNS)},
}

// piece is one object of the release or one hook, ready to apply.
type piece struct {
	key string
	obj *unstructured.Unstructured
	// red renders its sensitive values: Secret data, and the fields that
	// hold a set_sensitive value.
	red sensitive.Redactor
	// sensitivePaths are those fields, kept in private state so a refresh,
	// which renders nothing, hides the same ones.
	sensitivePaths []string
	// fromCRDsDir marks a CRD of a crds/ directory: installed before
	// anything else and, as Helm does, never deleted (see helmchart.Sorted).
	fromCRDsDir bool
	// ignored are the fields ignore_fields leaves to other managers: not
	// applied, not projected.
	ignored []objectpath.Path
}

// hook is a lifecycle hook of the release.
type hook struct {
	piece
	events   []release.HookEvent
	weight   int
	policies []release.HookDeletePolicy
}

// rendered is a release's configuration rendered against its cluster.
type rendered struct {
	chart *helmchart.Chart
	// digest is what the chart is (helmchart.Digest).
	digest string
	notes  string
	values helmchart.Values
	// config are the user-supplied values, merged, as the record keeps them.
	config map[string]any
	// crds go first; objects follow in Helm's install order.
	crds, objects []piece
	hooks         []hook
	// varies are the keys of the objects a second render of the same
	// inputs rendered otherwise (a password generated anew because its
	// Secret does not exist yet, a timestamp): what the apply stores in
	// them is known only after it.
	varies map[string]bool
	// unmatchedIgnores are the ignore_fields keys no object matched.
	unmatchedIgnores []string
	// pruned are, by key, the fields disable_openapi_validation left out
	// because the kind's schema does not declare them.
	pruned map[string][]string
}

// all are the release's objects, CRDs first, in install order.
func (r *rendered) all() []piece { return slices.Concat(r.crds, r.objects) }

// render loads and renders the chart of m against c. version, when set, pins
// the chart version the plan resolved, so an apply installs what was planned
// even if a newer chart matching the constraint appeared since.
func render(ctx context.Context, c *connection.Client, m *model, rel helmchart.Release, version string, diags *diag.Diagnostics) *rendered {
	vals := m.chartValues(ctx, diags)
	if diags.HasError() {
		return nil
	}
	ignores, ok := objectset.IgnoreRulesOf(ctx, m.IgnoreFields, pathIgnoreFields, diags)
	if !ok {
		return nil // invalid (in diags), or known only later
	}
	src := m.Source()
	if version != "" && src.Remote() {
		src.Version = version
	}
	pr := m.PostRenderer(ctx, diags)
	if diags.HasError() {
		return nil
	}
	req := helmchart.Request{Source: src, Values: vals, Release: rel,
		Cluster: &helmchart.Cluster{Config: c.Config, Discovery: c.Discovery}, Finder: c, PostRenderer: pr,
		DisableOpenAPIValidation: m.DisableOpenapiValidation.ValueBool()}
	out, failure := helmchart.LoadAndRender(ctx, req)
	if failure != nil {
		addFailure(diags, vals, failure)
		return nil
	}
	chart, sorted := out.Chart, out.Sorted
	var varies map[string]bool
	if chart.MayVary() {
		var err error
		if varies, err = varying(ctx, req, sorted); err != nil {
			diags.AddError(helmchart.ChartNotRendered, vals.Scrub(connection.Explain(err)))
			return nil
		}
	}
	res := &rendered{chart: chart, digest: helmchart.Digest(chart.Chart), notes: vals.Scrub(out.Rendered.NotesWith(m.RenderSubchartNotes.ValueBool())), values: vals, config: out.Config, varies: varies,
		pruned: out.Pruned}
	secrets := slices.DeleteFunc(vals.SensitiveTexts(), func(s string) bool { return len(s) < sensitive.MinScrub })
	id := m.Namespace.ValueString() + "/" + m.Name.ValueString()
	secretInName := false
	build := func(key, body string) (piece, bool) {
		if helmchart.NameHoldsSecret(key, secrets) {
			// Keys go to state and to plans in the clear: said once, and
			// without the key, which is what holds the value.
			if !secretInName {
				if helmchart.NameHoldsSecret(key, helmchart.Values{WriteOnly: vals.WriteOnly}.SensitiveTexts()) {
					diags.AddAttributeError(pathSetWO, helmchart.InvalidChartOutput, helmchart.WriteOnlyInName)
				} else {
					diags.AddAttributeError(pathSetSensitive, helmchart.InvalidChartOutput, helmchart.SecretInName)
				}
			}
			secretInName = true
			return piece{}, false
		}
		p, err := newPiece(id, key, body, secrets)
		if err != nil {
			diags.AddError(helmchart.InvalidChartOutput, vals.Scrub(fmt.Sprintf("%s: %v", key, err)))
			return piece{}, false
		}
		return p, true
	}
	for _, key := range slices.Sorted(maps.Keys(sorted.Objects.CRDs)) {
		if m.SkipCRDs.ValueBool() && sorted.FromCRDsDir[key] {
			delete(res.pruned, key) // not applied: nothing of it is left out
			continue                // as helm install --skip-crds
		}
		if p, ok := build(key, sorted.Objects.CRDs[key]); ok {
			p.fromCRDsDir = sorted.FromCRDsDir[key]
			res.crds = append(res.crds, p)
		}
	}
	for _, m := range []map[string]string{sorted.Objects.ClusterScoped, sorted.Objects.Namespaced} {
		for _, key := range slices.Sorted(maps.Keys(m)) {
			if p, ok := build(key, m[key]); ok {
				mark(p.obj, rel)
				res.objects = append(res.objects, p)
			}
		}
	}
	for _, p := range res.crds {
		mark(p.obj, rel)
	}
	sortInstallOrder(res.objects)
	for _, key := range slices.Sorted(maps.Keys(sorted.Hooks)) {
		p, ok := build(key, sorted.Hooks[key])
		if !ok {
			continue
		}
		res.hooks = append(res.hooks, newHook(p))
	}
	if diags.HasError() {
		return nil
	}
	res.ignore(ignores)
	return res
}

// renderRevision renders the revision an apply of m writes, next, as
// templates must see it (.Release.Revision, .Release.IsUpgrade), which is
// what decides between an upgrade and a repair. last is how the last apply
// rendered, given when the inputs are as they were then (sameValues): if
// the chart is the same too, the apply is a repair, which puts the cluster
// back as that apply left it, so it renders as that apply did and runs no
// hook. A chart that changed under the same inputs (a directory edited in
// place, an archive republished, a hook changed) is an upgrade: rendered
// again, as next. upgrade reports which it is.
func renderRevision(ctx context.Context, c *connection.Client, m *model, next helmchart.Release, last *renderedAs,
	version string, diags *diag.Diagnostics) (rd *rendered, seen helmchart.Release, upgrade bool) {
	if last == nil {
		return render(ctx, c, m, next, version, diags), next, true
	}
	seen = next
	seen.Revision, seen.IsUpgrade = last.Revision, last.IsUpgrade
	rd = render(ctx, c, m, seen, version, diags)
	if rd == nil || last.ChartDigest == "" || rd.digest == last.ChartDigest {
		return rd, seen, false
	}
	return render(ctx, c, m, next, version, diags), next, true
}

func newPiece(id, key, body string, secrets []string) (piece, error) {
	var obj unstructured.Unstructured
	if err := json.Unmarshal([]byte(body), &obj.Object); err != nil {
		return piece{}, err
	}
	var paths []objectpath.Path
	var texts []string
	if len(secrets) > 0 {
		held, err := helmchart.FieldsHolding(body, secrets)
		if err != nil {
			return piece{}, err
		}
		for _, s := range held {
			p, err := objectpath.Parse(s)
			if err != nil {
				return piece{}, err
			}
			paths = append(paths, p)
		}
		texts = held
	}
	return piece{key: key, obj: &obj, red: sensitive.New(id, paths), sensitivePaths: texts}, nil
}

// sortInstallOrder sorts pieces kind by kind in Helm's install order.
func sortInstallOrder(pieces []piece) {
	slices.SortStableFunc(pieces, func(a, b piece) int {
		return objectset.KindRank(relutil.InstallOrder, a.obj.GetKind()) - objectset.KindRank(relutil.InstallOrder, b.obj.GetKind())
	})
}

func newHook(p piece) hook {
	spec := helmchart.HookOf(p.obj.GetAnnotations())
	return hook{piece: p, events: spec.Events, weight: spec.Weight, policies: spec.DeletePolicies}
}

// mark gives obj Helm's ownership marks for rel.
func mark(obj *unstructured.Unstructured, rel helmchart.Release) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[labelManagedBy] = "Helm"
	obj.SetLabels(labels)
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotationReleaseName] = rel.Name
	ann[annotationReleaseNS] = rel.Namespace
	obj.SetAnnotations(ann)
}

// addFailure reports a step of rendering that failed, in the release's
// words: scrubbed of set_sensitive values, and a render that failed on the
// cluster's answer (a lookup) with what to do about it.
func addFailure(diags *diag.Diagnostics, vals helmchart.Values, f *helmchart.Failure) {
	switch f.Title {
	case helmchart.ChartNotLoaded:
		diags.AddAttributeError(pathChart, f.Title, f.Err.Error())
	case helmchart.InvalidChartOutput:
		for _, e := range yamldocs.Errors(f.Err) {
			diags.AddError(f.Title, vals.Scrub(e.Error()))
		}
	case helmchart.InvalidValues:
		diags.AddError(f.Title, vals.Scrub(f.Err.Error()))
	default:
		diags.AddError(f.Title, vals.Scrub(connection.Explain(f.Err)))
	}
}

// varying renders the chart of req a second time and returns the keys of
// the objects that came out otherwise than in first, or that only one of
// the two renders has.
func varying(ctx context.Context, req helmchart.Request, first helmchart.Sorted) (map[string]bool, error) {
	out, failure := helmchart.LoadAndRender(ctx, req) // Render trims the chart it is given: loaded anew
	if failure != nil {
		return nil, failure.Err // whichever step failed, the chart was not rendered
	}
	second := out.Sorted
	varies := map[string]bool{}
	compare := func(a, b map[string]string) {
		for key, body := range a {
			if other, ok := b[key]; !ok || other != body {
				varies[key] = true
			}
		}
	}
	for _, pair := range [][2]map[string]string{{first.Objects.CRDs, second.Objects.CRDs},
		{first.Objects.ClusterScoped, second.Objects.ClusterScoped}, {first.Objects.Namespaced, second.Objects.Namespaced}} {
		compare(pair[0], pair[1])
		compare(pair[1], pair[0])
	}
	return varies, nil
}
