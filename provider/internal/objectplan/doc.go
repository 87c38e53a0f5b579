// Package objectplan is the one way a resource plans a Kubernetes object.
// k8sconnect_object plans one, k8sconnect_patch plans a few fields of one,
// and k8sconnect_helm_release plans every object of a chart; each takes from
// here what they share, and keeps only what differs between them.
//
//   - The start of a plan (start.go): the client the plan asks, nothing when
//     the connection is known only at apply, and which cluster it is, checked
//     against the identity state recorded (ADR 0001). A connection that
//     cannot be built is reported on no attribute (connection.ReportClientError
//     says why).
//   - Planning one object (object.go): its last apply's record, the live
//     object read or handed on (package handon), whether it is unchanged since
//     that apply (then no dry run is sent, ADR 0011), the server-side dry run
//     or the answer another plan in this process got for the same body, and
//     the projection of the answer. It returns what it read and asked, for the
//     caller to hand on.
//   - Who holds a live object (holder.go): the marks that a k8sconnect
//     resource, a Helm release and field managers leave on it, read once.
package objectplan
