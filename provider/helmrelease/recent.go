package helmrelease

import "github.com/k8sconnect/k8sconnect/provider/internal/handon"

// recentReads are the objects of a release just read, handed on to the next
// call for the same release in this process (handon.Members): a 200-object
// release would otherwise read every object once per plan. Keyed by the
// release's id (namespace/name); an apply or a destroy forgets the
// release's copies before it writes. A dry run is identified by its body's
// keyed hash (objectset.BodyHash).
var recentReads handon.Members
