package manifestset

import "github.com/k8sconnect/k8sconnect/provider/internal/handon"

// recentReads are the members of a set just read, and the dry runs a plan
// sent, handed on to the next call for the same set in this process
// (handon.Members), as the release hands on its objects: Terraform and
// OpenTofu refresh and then plan, and Pulumi plans an update in its Diff
// and again in its Update, each of which would otherwise read every member
// again. Keyed by the set's id (the parent's namespace/name); an apply or a
// destroy forgets the set's copies before it writes.
var recentReads handon.Members
