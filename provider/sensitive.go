package provider

import (
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// HoldsSecrets reports whether a k8sconnect_object's yaml_body (or a
// k8sconnect_patch's content, with the target's apiVersion and kind) carries
// sensitive values: it describes a core v1 Secret, or the resource lists
// sensitive_fields. Engines that can mark a value secret by value (Pulumi, see
// ../bridge) use it to mark the whole input and its outputs secret. A body
// that does not parse is treated as sensitive.
func HoldsSecrets(yamlBody string, hasSensitiveFields bool) bool {
	if hasSensitiveFields {
		return true
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal([]byte(yamlBody), &head); err != nil {
		return true
	}
	return sensitive.IsSecret(head.APIVersion, head.Kind)
}

// IsSecretKind reports whether apiVersion and kind name a core v1 Secret.
func IsSecretKind(apiVersion, kind string) bool { return sensitive.IsSecret(apiVersion, kind) }
