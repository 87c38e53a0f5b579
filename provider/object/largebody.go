package object

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/largevalue"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// lineDiffWarnAt is the number of lines above which a changed yaml_body in
// YAML gets a warning. Terraform and OpenTofu show a change to multi-line
// text as a diff of its lines whose time and memory grow with the square of
// the lines, worst for text that repeats lines as CRD schemas do: a 7,300-line
// CRD took 13 s and 1 GB to show, one of 15,700 lines 50 s and 4.4 GB; at
// 2,000 lines it is about a second (docs/adr/0011-bodies-as-json.md).
const lineDiffWarnAt = 2000

// warnLineDiff warns, under Terraform and OpenTofu, when a change to a long
// YAML body will be shown as such a diff, and says how to have it shown field
// by field: as JSON, which the yaml_split and yaml_scoped data sources hand
// out. Pulumi shows a changed string without this cost.
func (r *Resource) warnLineDiff(prior, next string, id manifest.Identity, diags *diag.Diagnostics) {
	if r.handOnPlans || prior == next || !lineDiffed(prior) || !lineDiffed(next) {
		return
	}
	lines := max(strings.Count(prior, "\n"), strings.Count(next, "\n"))
	if lines <= lineDiffWarnAt {
		return
	}
	diags.AddAttributeWarning(pathYAMLBody, "A long yaml_body makes a slow plan",
		fmt.Sprintf("yaml_body of %s is %d lines of YAML. Terraform and OpenTofu show a change to multi-line text "+
			"by comparing every line with every other, which takes seconds to minutes and gigabytes of memory "+
			"at this size (50 s and 4.4 GB for an 850 KB CRD), and print the whole body. The change itself, field "+
			"by field, is in managed_state_projection.\n\nPass the body as JSON, which they show field by field: "+
			"read the file with the k8sconnect_yaml_split data source, which hands out each object as JSON, and "+
			"use yaml_body = data.k8sconnect_yaml_split.<name>.manifests[%q].", id, lines, yamldocs.Key(id.GVK().GroupKind(), id.Namespace, id.Name)))
}

// lineDiffed reports whether Terraform would show a change to body as a line
// diff: it is multi-line and not JSON (JSON is shown field by field).
func lineDiffed(body string) bool {
	t := strings.TrimSpace(body)
	return strings.Contains(t, "\n") && !strings.HasPrefix(t, "{")
}

// largeChangesShown is how many changed fields warnLargeChanges lists per
// value.
const largeChangesShown = 10

// warnLargeChanges says, field by field, what the apply changes inside a value
// that managed_state_projection holds by its digest (package largevalue): the
// plan itself shows only that the digest changes. Whether yaml_body changed
// there or someone changed the object, this is what the apply will write:
// the live value against the dry run's.
func warnLargeChanges(id manifest.Identity, live, dry *unstructured.Unstructured, planned, stored projection.Projection,
	red sensitive.Redactor, diags *diag.Diagnostics) {
	names := make([]string, 0, 1)
	for name, v := range planned {
		if largevalue.Is(v) && stored[name] != v {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		p, err := red.Resolve(dry.Object, name)
		if err != nil {
			continue
		}
		was, _ := projection.Value(live.Object, p)
		now, _ := projection.Value(dry.Object, p)
		changes, total := largevalue.Changes(p, was, now, largeChangesShown)
		if total == 0 {
			continue // only the digest's stand-in changed, not the value: nothing to list
		}
		var b strings.Builder
		fmt.Fprintf(&b, "managed_state_projection holds %s of %s by its length and digest, a value too large to keep "+
			"in state twice, so the plan shows only that the digest changes. The apply changes these fields in it (%d in all):",
			name, id, total)
		for _, c := range changes {
			fmt.Fprintf(&b, "\n  %s: %s -> %s", c.Path, c.Was, c.Now)
		}
		if total > len(changes) {
			fmt.Fprintf(&b, "\n  and %d more", total-len(changes))
		}
		diags.AddAttributeWarning(pathProjection, "A large value changes", b.String())
	}
}
