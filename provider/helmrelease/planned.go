package helmrelease

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// An apply does what its plan showed, or nothing. The apply renders the
// chart again, and the chart (a directory edited, an archive republished) or
// the cluster (what a lookup reads, the release's history) may have changed
// since a saved plan was made: the apply then refuses, before it writes
// anything, naming the objects that differ, rather than apply what no plan
// showed. Terraform itself notices only once all is applied ("Provider
// produced inconsistent result"). An upgrade's plan hands its apply what it
// rendered in the planned private state; an install's apply, which the
// engines give none, dry-runs its objects again (differences).

// privatePlanned is the key of the plan's rendering in the planned private
// state; ModifyPlan sets or clears it at every plan, the apply clears it.
const privatePlanned = "release_planned"

type plannedRender struct {
	// Bodies are the keyed hashes (bodyHash) of the objects whose
	// projection the plan knows; one known only after apply (its CRD or
	// namespace comes with the apply, it renders otherwise every time) is
	// not compared.
	Bodies map[string]string `json:"bodies,omitempty"`
}

// newPlannedRender is what the plan keeps of rd, whose objects it planned.
func newPlannedRender(rd *rendered, objects types.Map) plannedRender {
	out := plannedRender{Bodies: map[string]string{}}
	planned := objects.Elements()
	for _, p := range rd.all() {
		if v, ok := planned[p.key]; ok && objectset.Known(v) {
			out.Bodies[p.key] = objectset.BodyHash(p.obj, p.red)
		}
	}
	return out
}

func savePlanned(ctx context.Context, w privatestate.Writer, pr *plannedRender) diag.Diagnostics {
	if pr == nil {
		return w.SetKey(ctx, privatePlanned, nil)
	}
	return privatestate.Save(ctx, w, privatePlanned, *pr)
}

// loadPlanned is what the plan rendered; nil when it kept nothing (a plan
// that rendered nothing, made by an earlier version, or an engine that does
// not hand the planned private state to the apply).
func loadPlanned(ctx context.Context, r privatestate.Reader) *plannedRender {
	pr, ok, err := privatestate.Load[plannedRender](ctx, r, privatePlanned)
	if err != nil || !ok {
		return nil
	}
	return &pr
}

// fieldsShown is how many differing fields an object's line names.
const fieldsShown = 3

// differences lists how rd, rendered by the apply, differs from what was
// planned: objects, whose planned projections are objects, rendered now and
// not planned, planned and no longer rendered, or storing otherwise than
// planned, with the first fields that differ. bodies are the hashes of the
// bodies the plan rendered (nil when the plan kept none: then only which
// objects are rendered is compared): an object rendered with the same body
// is what was planned; one rendered otherwise is dry-run, and differs if
// what the apply would store does. An object whose projection is known only
// after apply is not compared. owned are the fields k8sconnect owned after
// the last apply, which the plan's projections show too.
func differences(ctx context.Context, c *connection.Client, rd *rendered, objects types.Map, bodies map[string]string,
	owned func(key string) *fieldpath.Set) []string {
	planned := objects.Elements()
	pieces := rd.all()
	lines := make([]string, len(pieces))
	objectset.InParallel(len(pieces), func(i int) {
		p := pieces[i]
		v, ok := planned[p.key]
		switch {
		case !ok:
			lines[i] = p.key + ": rendered now, not in the plan"
			return
		case !objectset.Known(v) || bodies[p.key] == "" || objectset.BodyHash(p.obj, p.red) == bodies[p.key]:
			return
		}
		dry, err := ssa.Apply(ctx, c, p.obj.DeepCopy(), ssa.Options{FieldManager: ssa.FieldManager, DryRun: true})
		if err != nil {
			lines[i] = fmt.Sprintf("%s: its dry run fails now: %s", p.key, connection.Explain(err))
			return
		}
		obs, err := observe(dry, owned(p.key), p)
		if err != nil {
			lines[i] = fmt.Sprintf("%s: its dry run cannot be read: %v", p.key, err)
			return
		}
		if fields := changedFields(ownership.StateProjection(ctx, objectset.MapOf(v)), obs.Projection); len(fields) > 0 {
			lines[i] = p.key + ": " + strings.Join(fields, "; ")
		}
	})
	out := slices.DeleteFunc(lines, func(l string) bool { return l == "" })
	rendered := map[string]bool{}
	for _, p := range pieces {
		rendered[p.key] = true
	}
	for _, key := range slices.Sorted(maps.Keys(planned)) {
		if !rendered[key] {
			out = append(out, key+": in the plan, no longer rendered")
		}
	}
	return out
}

// changedFields names the fields of now that differ from planned, the
// first fieldsShown of them by path, and how many more.
func changedFields(planned, now projection.Projection) []string {
	all := maps.Clone(planned)
	maps.Copy(all, now)
	paths := slices.Sorted(maps.Keys(all))
	var out []string
	more := 0
	for _, path := range paths {
		was, wasSet := planned[path]
		is, isSet := now[path]
		if wasSet == isSet && was == is {
			continue
		}
		if len(out) == fieldsShown {
			more++
			continue
		}
		switch {
		case !wasSet:
			out = append(out, fmt.Sprintf("%s is %q now, not set in the plan", path, is))
		case !isSet:
			out = append(out, fmt.Sprintf("%s is no longer set, planned %q", path, was))
		default:
			out = append(out, fmt.Sprintf("%s is %q now, planned %q", path, is, was))
		}
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("and %d more field(s)", more))
	}
	return out
}

// disagreement is the error's detail when the apply would not apply what
// was planned: the objects that differ (differences), and whether the chart
// changed.
func disagreement(objects []string, chartChanged bool) string {
	var b strings.Builder
	switch {
	case chartChanged && len(objects) > 0:
		b.WriteString("The chart changed since the plan was made, and the release's objects with it:\n")
	case chartChanged:
		b.WriteString("The chart changed since the plan was made (a hook, NOTES.txt or another file that no object " +
			"of the release shows), so the apply would not run what was planned.\n")
	default:
		b.WriteString("The chart renders otherwise against the cluster than it did at plan time (what a lookup reads, " +
			"the release's revision, or the server's answer changed):\n")
	}
	for _, o := range objects {
		b.WriteString("  - " + o + "\n")
	}
	b.WriteString("Nothing was applied and no revision written. Plan again to see what the apply would do now.")
	return b.String()
}
