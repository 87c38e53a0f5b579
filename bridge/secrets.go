package bridge

import (
	"context"

	sdkbridge "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge"
	shim "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfshim"
	pschema "github.com/pulumi/pulumi/pkg/v3/codegen/schema"
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
	// The YAML data sources' content is sensitive for Terraform's plan, which
	// prints the arguments of a deferred read. Pulumi shows no function
	// arguments, and a secret argument would make every result of an
	// output-form call secret, hiding each object's diff in a bundle that
	// holds a single Secret (docs/guides/secrets.md says how Secrets stay
	// secret there).
	for _, name := range []string{"_yaml_split", "_yaml_scoped"} {
		if ds := info.DataSources[provider.TypeName+name]; ds != nil {
			if ds.Fields == nil {
				ds.Fields = map[string]*sdkbridge.SchemaInfo{}
			}
			ds.Fields["content"] = &sdkbridge.SchemaInfo{Secret: sdkbridge.False()}
		}
	}
	refSecretWhenCredentialed := secretWhenCredentialed(sensitiveFields(
		info.P.ResourcesMap().Get(provider.TypeName + "_object").Schema().Get("cluster_connection")))
	if r := info.Resources[provider.TypeName+"_wait"]; r != nil {
		r.TransformOutputs = refSecretWhenCredentialed
	}
	if r := info.Resources[provider.TypeName+"_object"]; r != nil {
		r.PreCheckCallback = func(_ context.Context, config, _ resource.PropertyMap) (resource.PropertyMap, error) {
			return secretObjectBody(config), nil
		}
		r.TransformOutputs = func(ctx context.Context, outs resource.PropertyMap) (resource.PropertyMap, error) {
			return refSecretWhenCredentialed(ctx, secretObjectBody(outs))
		}
	}
	if r := info.Resources[provider.TypeName+"_manifest_set"]; r != nil {
		r.PreCheckCallback = func(_ context.Context, config, _ resource.PropertyMap) (resource.PropertyMap, error) {
			return secretSetBody(config), nil
		}
		r.TransformOutputs = func(_ context.Context, outs resource.PropertyMap) (resource.PropertyMap, error) {
			return secretSetBody(outs), nil
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

// secretWhenCredentialed makes a resourceRef output whose connection copy
// holds a credential secret as a whole, and leaves one without any plain. The
// provider marks the copy sensitive as a whole (in Terraform state that is one
// entry per instance instead of one per field: see connection.CopyAttribute).
// Pulumi's language hosts hand a program an empty value for any secret nested
// in an output object, be it the whole copy or a token in it, so a Wait given
// such a resourceRef would have no connection; a secret output property
// arrives whole. The nested
// field overrides of ProviderInfo cannot help: the bridge's schema generation
// wants them under Elem, which its Plugin Framework runtime ignores.
func secretWhenCredentialed(shape secretShape) func(context.Context, resource.PropertyMap) (resource.PropertyMap, error) {
	return func(_ context.Context, outs resource.PropertyMap) (resource.PropertyMap, error) {
		ref, ok := outs["resourceRef"]
		if !ok || !ref.IsObject() {
			return outs, nil
		}
		conn, ok := ref.ObjectValue()["clusterConnection"]
		if !ok || !conn.IsSecret() {
			return outs, nil
		}
		plain := ref.ObjectValue().Copy()
		plain["clusterConnection"] = conn.SecretValue().Element
		out := outs.Copy()
		out["resourceRef"] = resource.NewObjectProperty(plain)
		if shape.holdsAny(conn.SecretValue().Element) {
			out["resourceRef"] = resource.MakeSecret(out["resourceRef"])
		}
		return out, nil
	}
}

// noNestedSecretInResourceRef says in the schema what secretWhenCredentialed
// does to the values: a ResourceRef's clusterConnection is never a secret of
// its own (the whole resourceRef is, when it holds a credential); its
// ClusterConnection type marks the credential fields, as for every other
// clusterConnection (shareTypes).
func noNestedSecretInResourceRef(spec *pschema.PackageSpec) {
	ref := spec.Types[Name+":index/ResourceRef:ResourceRef"]
	conn, ok := ref.Properties["clusterConnection"]
	if !ok {
		return
	}
	conn.Secret = false
	ref.Properties["clusterConnection"] = conn
}

// secretShape says which fields of an object value are secret: a key with a
// nil shape is secret itself, one with a shape has secret fields inside.
type secretShape map[resource.PropertyKey]secretShape

// sensitiveFields is the shape of the fields that an object attribute's schema
// marks sensitive, by their Pulumi names.
func sensitiveFields(s shim.Schema) secretShape {
	res, ok := s.Elem().(shim.Resource)
	if !ok {
		return nil
	}
	shape := secretShape{}
	res.Schema().Range(func(name string, f shim.Schema) bool {
		key := resource.PropertyKey(sdkbridge.TerraformToPulumiNameV2(name, res.Schema(), nil))
		if f.Sensitive() {
			shape[key] = nil
		} else if nested := sensitiveFields(f); len(nested) > 0 {
			shape[key] = nested
		}
		return true
	})
	return shape
}

// holdsAny reports whether an object value sets any field that shape names.
func (shape secretShape) holdsAny(v resource.PropertyValue) bool {
	if v.IsSecret() {
		v = v.SecretValue().Element
	}
	if !v.IsObject() {
		return v.IsComputed() || v.IsOutput() // unknown in a preview: assume so
	}
	for key, nested := range shape {
		f, ok := v.ObjectValue()[key]
		switch {
		case !ok || f.IsNull():
		case nested == nil || nested.holdsAny(f):
			return true
		}
	}
	return false
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

// secretSetBody marks a ManifestSet's yamlBody secret when it holds a
// Secret (provider.SetHoldsSecrets).
func secretSetBody(m resource.PropertyMap) resource.PropertyMap {
	body, ok := m["yamlBody"]
	if !ok || body.IsSecret() || !body.IsString() || !provider.SetHoldsSecrets(body.StringValue()) {
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
