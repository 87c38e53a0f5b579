package object

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
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
