package yamldocs

import (
	"maps"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtinScopes is whether each kind the Kubernetes API server serves itself is
// namespaced, so yaml_scoped works without a cluster (for instance before the
// cluster exists). Scope is fixed for a kind across versions and releases, so a
// table cannot go stale; kinds added by later releases are found through
// cluster_connection or reported. An acceptance test compares the table with a
// live cluster's discovery.
var builtinScopes = map[schema.GroupKind]bool{
	// core
	{Group: "", Kind: "Binding"}:               true,
	{Group: "", Kind: "ComponentStatus"}:       false,
	{Group: "", Kind: "ConfigMap"}:             true,
	{Group: "", Kind: "Endpoints"}:             true,
	{Group: "", Kind: "Event"}:                 true,
	{Group: "", Kind: "LimitRange"}:            true,
	{Group: "", Kind: "Namespace"}:             false,
	{Group: "", Kind: "Node"}:                  false,
	{Group: "", Kind: "PersistentVolume"}:      false,
	{Group: "", Kind: "PersistentVolumeClaim"}: true,
	{Group: "", Kind: "Pod"}:                   true,
	{Group: "", Kind: "PodTemplate"}:           true,
	{Group: "", Kind: "ReplicationController"}: true,
	{Group: "", Kind: "ResourceQuota"}:         true,
	{Group: "", Kind: "Secret"}:                true,
	{Group: "", Kind: "Service"}:               true,
	{Group: "", Kind: "ServiceAccount"}:        true,

	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          false,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   false,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     false,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        false,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: false,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   false,

	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: false,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:             false,

	{Group: "apps", Kind: "ControllerRevision"}: true,
	{Group: "apps", Kind: "DaemonSet"}:          true,
	{Group: "apps", Kind: "Deployment"}:         true,
	{Group: "apps", Kind: "ReplicaSet"}:         true,
	{Group: "apps", Kind: "StatefulSet"}:        true,

	{Group: "authentication.k8s.io", Kind: "SelfSubjectReview"}:       false,
	{Group: "authentication.k8s.io", Kind: "TokenReview"}:             false,
	{Group: "authorization.k8s.io", Kind: "LocalSubjectAccessReview"}: true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview"}:  false,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectRulesReview"}:   false,
	{Group: "authorization.k8s.io", Kind: "SubjectAccessReview"}:      false,

	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: true,
	{Group: "batch", Kind: "CronJob"}:                       true,
	{Group: "batch", Kind: "Job"}:                           true,

	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}: false,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:        false,
	{Group: "certificates.k8s.io", Kind: "PodCertificateRequest"}:     true,

	{Group: "coordination.k8s.io", Kind: "Lease"}:          true,
	{Group: "coordination.k8s.io", Kind: "LeaseCandidate"}: true,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:     true,
	{Group: "events.k8s.io", Kind: "Event"}:                true,

	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                 false,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}: false,
	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}:                false,

	{Group: "networking.k8s.io", Kind: "IPAddress"}:     false,
	{Group: "networking.k8s.io", Kind: "Ingress"}:       true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:  false,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}: true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:   false,

	{Group: "node.k8s.io", Kind: "RuntimeClass"}:        false,
	{Group: "policy", Kind: "PodDisruptionBudget"}:      true,
	{Group: "policy", Kind: "Eviction"}:                 true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: false,

	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        false,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: false,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        true,

	{Group: "resource.k8s.io", Kind: "DeviceClass"}:           false,
	{Group: "resource.k8s.io", Kind: "DeviceTaintRule"}:       false,
	{Group: "resource.k8s.io", Kind: "ResourceClaim"}:         true,
	{Group: "resource.k8s.io", Kind: "ResourceClaimTemplate"}: true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:         false,

	{Group: "storage.k8s.io", Kind: "CSIDriver"}:             false,
	{Group: "storage.k8s.io", Kind: "CSINode"}:               false,
	{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}:    true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:          false,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:      false,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}: false,

	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}: false,
}

// BuiltinNamespaced looks a kind up in the built-in table.
func BuiltinNamespaced(gk schema.GroupKind) (namespaced, known bool) {
	namespaced, known = builtinScopes[gk]
	return namespaced, known
}

// BuiltinScopes returns a copy of the table, for tests that compare it with a
// live cluster.
func BuiltinScopes() map[schema.GroupKind]bool { return maps.Clone(builtinScopes) }
