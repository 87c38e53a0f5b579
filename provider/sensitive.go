package provider

import (
	"encoding/json"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
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
	// JSON, as the data sources hand bodies out, is read as JSON: reading
	// an 830 KB CRD as YAML first took the Pulumi plugin half a second of a
	// bundle's create.
	read := func(b []byte, v any) error { return yaml.Unmarshal(b, v) }
	if utilyaml.IsJSONBuffer([]byte(yamlBody)) {
		read = json.Unmarshal
	}
	if err := read([]byte(yamlBody), &head); err != nil {
		return true
	}
	return sensitive.IsSecret(head.APIVersion, head.Kind)
}

// IsSecretKind reports whether apiVersion and kind name a core v1 Secret.
func IsSecretKind(apiVersion, kind string) bool { return sensitive.IsSecret(apiVersion, kind) }
