// Package object is the k8sconnect_object resource: one Kubernetes object of
// any kind, written as YAML and applied with Server-Side Apply under the field
// manager "k8sconnect".
//
// Plans tell the truth: every plan runs a server-side dry-run apply and
// records only the fields k8sconnect owns, with the values the server would
// store (managed_state_projection). Drift is judged on that projection alone.
//
// The files follow an object's life:
//
//   - resource_object.go: the schema and the model.
//   - validate.go and config.go: what is refused before any request, and the
//     configuration turned into the object to apply (yaml_body without its
//     ignore_fields); sensitive.go: which values are secret.
//   - plan.go: ModifyPlan, the dry run and the warnings a plan gives.
//   - create.go: the exclusive, crash-safe create (docs/adr/0001).
//   - apply.go: Create and Update, bound to the object's UID, and the hand-over
//     of newly ignored fields; ordering.go: waiting for a CRD or namespace the
//     same run creates, and the retries writes share.
//   - read.go: the refresh; projection.go: the live object projected onto our
//     fields; markers.go: the id and annotations k8sconnect puts on an object.
//   - delete.go: a delete bound to the UID, and what a stuck delete waits for.
//   - import.go, move.go, replace.go: import, moved blocks from other
//     providers (docs/adr/0010), and what a replacement loses.
//   - memory.go: what one run remembers of an object between its refresh, its
//     plan and its apply, to spare requests.
package object
