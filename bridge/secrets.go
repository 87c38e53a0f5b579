package bridge

import (
	"context"

	sdkbridge "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/k8sconnect/k8sconnect/provider"
)

// markSecrets makes Pulumi keep a Secret's values secret in every engine
// view: the stack's stored inputs and outputs and the preview. Terraform
// cannot mark an attribute sensitive by value, so the provider hashes the
// values in every computed attribute and users wrap yaml_body in sensitive();
// Pulumi can, so a KubernetesObject whose yamlBody is a core v1 Secret (or
// that lists sensitiveFields) has yamlBody marked secret on input (Check) and
// output, and a Patch whose target is a Secret has its patch content marked
// secret. The rule is provider.HoldsSecrets, the same one the provider uses.
func markSecrets(info *sdkbridge.ProviderInfo) {
	if r := info.Resources[provider.TypeName+"_object"]; r != nil {
		r.PreCheckCallback = func(_ context.Context, config, _ resource.PropertyMap) (resource.PropertyMap, error) {
			return secretObjectBody(config), nil
		}
		r.TransformOutputs = func(_ context.Context, outs resource.PropertyMap) (resource.PropertyMap, error) {
			return secretObjectBody(outs), nil
		}
	}
	if r := info.Resources[provider.TypeName+"_patch"]; r != nil {
		r.PreCheckCallback = func(_ context.Context, config, _ resource.PropertyMap) (resource.PropertyMap, error) {
			return secretPatchContent(config), nil
		}
		r.TransformOutputs = func(_ context.Context, outs resource.PropertyMap) (resource.PropertyMap, error) {
			return secretPatchContent(outs), nil
		}
	}
}

func secretObjectBody(m resource.PropertyMap) resource.PropertyMap {
	body, ok := m["yamlBody"]
	if !ok || body.IsSecret() || !body.IsString() {
		return m
	}
	fields := m["sensitiveFields"]
	hasFields := fields.IsComputed() || (fields.IsArray() && len(fields.ArrayValue()) > 0) || fields.IsSecret()
	if !provider.HoldsSecrets(body.StringValue(), hasFields) {
		return m
	}
	out := m.Copy()
	out["yamlBody"] = resource.MakeSecret(body)
	return out
}

func secretPatchContent(m resource.PropertyMap) resource.PropertyMap {
	target, ok := m["target"]
	if !ok || !target.IsObject() {
		return m
	}
	t := target.ObjectValue()
	apiVersion, kind := t["apiVersion"], t["kind"]
	if !apiVersion.IsString() || !kind.IsString() || !provider.IsSecretKind(apiVersion.StringValue(), kind.StringValue()) {
		return m
	}
	out := m.Copy()
	for _, k := range []resource.PropertyKey{"patch", "jsonPatch", "mergePatch"} {
		if v, ok := out[k]; ok && !v.IsNull() && !v.IsSecret() {
			out[k] = resource.MakeSecret(v)
		}
	}
	return out
}
