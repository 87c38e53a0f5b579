package helmrelease

import (
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"

	"github.com/k8sconnect/k8sconnect/provider/internal/chartinputs"
)

// What decides a revision: whether the inputs are as in state.

// sameInputs reports whether everything that decides what a revision holds,
// other than the objects, is as in state. How the chart is reached (the
// credentials and TLS files of its repository and of its dependencies'
// dependency_repositories, verify and keyring), how an apply runs (wait,
// timeout, max_history), the connection and delete_protection are not: a
// change to them alone (a rotated password) writes no revision.
func sameInputs(plan, state model) bool {
	return plan.ChartVersion.Equal(state.ChartVersion) && sameValues(plan, state)
}

// sameValues reports whether the chart's source and values are as in state
// (the resolved chart version aside: it is known only once rendered), and
// what the record says of the revision besides its objects: its notes'
// subcharts and its description, whose change helm makes an upgrade too,
// set_wo_revision, which stands in for set_wo (kept nowhere), and the
// post-renderer.
func sameValues(plan, state model) bool {
	for _, p := range [][2]attr.Value{{plan.Values, state.Values}, {plan.Chart, state.Chart},
		{plan.Repository, state.Repository}, {plan.Version, state.Version}, {plan.Postrender, state.Postrender}} {
		if !p[0].Equal(p[1]) {
			return false
		}
	}
	// Unset and false, unset and empty, are one.
	if plan.RenderSubchartNotes.ValueBool() != state.RenderSubchartNotes.ValueBool() ||
		plan.Description.ValueString() != state.Description.ValueString() || !plan.SetWORevision.Equal(state.SetWORevision) {
		return false
	}
	return settingsEqual(plan.Set, state.Set) && settingsEqual(plan.SetSensitive, state.SetSensitive) &&
		slices.EqualFunc(plan.SetList, state.SetList, func(x, y chartinputs.ListSetting) bool {
			return x.Name.Equal(y.Name) && x.Value.Equal(y.Value)
		})
}

func settingsEqual(a, b []chartinputs.Setting) bool {
	return slices.EqualFunc(a, b, func(x, y chartinputs.Setting) bool {
		return x.Name.Equal(y.Name) && x.Value.Equal(y.Value) && x.Type.Equal(y.Type)
	})
}
