package provider

import (
	"encoding/json"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
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

// SetHoldsSecrets reports whether the multi-document YAML of a manifest
// set's yaml_body holds a core v1 Secret (a List's items included): then
// the whole body is secret. A document that does not parse counts as one
// that may hold one, since what it holds cannot be told.
func SetHoldsSecrets(yamlBody string) bool {
	for _, doc := range yamldocs.FromContent(yamlBody) {
		manifests, err := yamldocs.Parse(doc)
		if err != nil {
			return true
		}
		for _, m := range manifests {
			if IsSecretKind(m.APIVersion, m.Kind) {
				return true
			}
		}
	}
	return false
}
