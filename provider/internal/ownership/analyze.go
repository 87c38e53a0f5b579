package ownership

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// Streak counts consecutive applies that reverted one field from the same managers.
type Streak struct {
	Managers []string `json:"managers"`
	Count    int      `json:"count"`
}

// Plan is what a resource knows at plan time about the fields one manager asserts.
type Plan struct {
	Subject string // e.g. "Deployment prod/web"
	Manager string // our field manager
	Live    *unstructured.Unstructured
	// Recorded: our fields' values at our last apply. Planned: what the dry run
	// says they will be.
	Recorded, Planned projection.Projection
	Streaks           map[string]Streak // from the last apply
	// Redactor renders live values the way Recorded and Planned were
	// rendered, so sensitive fields compare as keyed hashes.
	Redactor sensitive.Redactor
}

// Analyze classifies every field the plan touches. It returns the report and
// the streaks to keep if this plan is applied.
func Analyze(p Plan) (*Report, map[string]Streak, []Field, error) {
	fields, err := managedfields.Of(p.Live)
	if err != nil {
		return nil, nil, nil, err
	}
	owners := projection.OwnersByPath(p.Live.Object, fields, p.Redactor)
	paths := map[string]bool{}
	for k := range p.Recorded {
		paths[k] = true
	}
	for k := range p.Planned {
		paths[k] = true
	}
	sorted := make([]string, 0, len(paths))
	for k := range paths {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)

	report := &Report{Subject: p.Subject}
	next := map[string]Streak{}
	var impossible []Field
	for _, path := range sorted {
		rec, prev := p.Recorded[path]
		plan, now := p.Planned[path]
		live := liveValue(p.Live, path, p.Redactor)
		others := without(owners[path], p.Manager)
		if alias, ok := secretDataPath(p.Live, path); ok {
			// Whoever changed data.<key> changed what stringData.<key> wrote.
			others = union(others, without(owners[alias], p.Manager))
		}
		external := prev && live != rec
		if !prev {
			// A field we did not own conflicts when someone else holds a value
			// other than the one we are about to set.
			external = len(others) > 0 && live != plan
		}
		f := Field{
			Path:       path,
			Transition: Transition{Prev: prev, Now: now, Config: prev != now || plan != rec, External: external},
			Live:       live, Recorded: rec, Planned: plan, Managers: others,
		}
		if Classify(f.Transition) == DriftRevert {
			f.Streak = 1
			if s, ok := p.Streaks[path]; ok && equal(s.Managers, others) {
				f.Streak = s.Count + 1
			}
			next[path] = Streak{Managers: others, Count: f.Streak}
		}
		if report.Add(f) == Impossible {
			impossible = append(impossible, f)
		}
	}
	return report, next, impossible, nil
}

func liveValue(obj *unstructured.Unstructured, path string, red sensitive.Redactor) string {
	p, err := red.Resolve(obj.Object, path)
	if err != nil {
		return ""
	}
	v, ok := projection.Value(obj.Object, p)
	if !ok {
		return ""
	}
	return red.Render(obj.Object, p, v)
}

// secretDataPath is data.<key> for a Secret's stringData.<key> (see
// projection.Value).
func secretDataPath(obj *unstructured.Unstructured, path string) (string, bool) {
	if obj == nil || !sensitive.IsSecret(obj.GetAPIVersion(), obj.GetKind()) {
		return "", false
	}
	p, err := objectpath.Parse(path)
	if err != nil || len(p) != 2 || p[0].Field == nil || *p[0].Field != "stringData" {
		return "", false
	}
	return objectpath.Path{objectpath.Field("data"), p[1]}.String(), true
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string{}, a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
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

func equal(a, b []string) bool {
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
