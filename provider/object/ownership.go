package object

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// Private state keys for ownership messaging.
const (
	// privateAppliedProjection: the values of our fields at our last apply. A
	// refresh overwrites the projection in state with live values, so this is
	// what "external_changed" is measured against (ADR-021 option A).
	privateAppliedProjection = "applied_projection"
	// privateStreaks: per field, how many consecutive applies reverted it from
	// the same manager.
	privateStreaks = "revert_streaks"
)

type streak struct {
	Managers []string `json:"managers"`
	Count    int      `json:"count"`
}

type privateStore interface {
	privateReader
	privateState
}

// explainOwnership classifies every field this plan touches and adds at most one
// warning per conflict kind.
func (r *Resource) explainOwnership(ctx context.Context, id manifest.Identity, live *unstructured.Unstructured,
	planned projection.Projection, private privateStore, diags *diag.Diagnostics) {
	recorded, err := loadJSON[projection.Projection](ctx, private, privateAppliedProjection)
	if err != nil || recorded == nil {
		return // no record of our last apply (an import, or state from before it was kept)
	}
	streaks, _ := loadJSON[map[string]streak](ctx, private, privateStreaks)
	fields, err := managedfields.Of(live)
	if err != nil {
		return
	}
	owners := projection.OwnersByPath(fields)

	paths := map[string]bool{}
	for p := range recorded {
		paths[p] = true
	}
	for p := range planned {
		paths[p] = true
	}
	report := ownership.Report{Subject: id.String()}
	nextStreaks := map[string]streak{}
	for _, p := range sortedKeys(paths) {
		rec, prev := recorded[p]
		plan, now := planned[p]
		liveVal := liveValue(live, p)
		others := without(owners[p], ssa.FieldManager)
		external := prev && liveVal != rec
		if !prev {
			// A field we did not own: it conflicts when someone else holds a
			// different value than the one we are about to set.
			external = len(others) > 0 && liveVal != plan
		}
		f := ownership.Field{
			Path:       p,
			Transition: ownership.Transition{Prev: prev, Now: now, Config: prev != now || plan != rec, External: external},
			Live:       liveVal, Recorded: rec, Planned: plan, Managers: others,
		}
		if ownership.Classify(f.Transition) == ownership.DriftRevert {
			f.Streak = 1
			if s, ok := streaks[p]; ok && equalStrings(s.Managers, others) {
				f.Streak = s.Count + 1
			}
			nextStreaks[p] = streak{Managers: others, Count: f.Streak}
		}
		if k := report.Add(f); k == ownership.Impossible {
			tflog.Debug(ctx, "ownership transition the table calls impossible", map[string]any{"object": id.String(), "field": p, "row": f.Transition.Row()})
		}
	}
	diags.Append(saveJSON(ctx, private, privateStreaks, nextStreaks)...)
	for _, m := range report.Messages(r.verbosity) {
		diags.AddWarning(m.Summary, m.Detail)
	}
}

func liveValue(obj *unstructured.Unstructured, path string) string {
	p, err := objectpath.Parse(path)
	if err != nil {
		return ""
	}
	v, ok := p.Get(obj.Object)
	if !ok {
		return ""
	}
	return objectpath.Render(v)
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func loadJSON[T any](ctx context.Context, p privateReader, key string) (T, error) {
	var v T
	raw, diags := p.GetKey(ctx, key)
	if diags.HasError() || len(raw) == 0 {
		return v, nil
	}
	err := json.Unmarshal(raw, &v)
	return v, err
}

func saveJSON(ctx context.Context, p privateState, key string, v any) diag.Diagnostics {
	raw, err := json.Marshal(v)
	if err != nil {
		var d diag.Diagnostics
		d.AddWarning("Could not record private state", err.Error())
		return d
	}
	return p.SetKey(ctx, key, raw)
}
