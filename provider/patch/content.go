package patch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
)

// content is a parsed patch, ready to send.
type content struct {
	patchType ktypes.PatchType
	// body is the JSON sent to the server. For an apply patch it still lacks
	// apiVersion, kind and metadata.name/namespace, which come from target.
	body []byte
	// object is the apply patch as a map (apply patches only).
	object map[string]any
}

var pathPatchWO = path.Root("patch_wo")

// writeOnlyEngines is a sentence the Pulumi docs replace with their own
// (bridge/sdkgen's pulumiTerms).
const writeOnlyEngines = "Needs Terraform 1.11 or OpenTofu 1.11 or later."

// withWriteOnly is m (read from a plan, where the engine leaves patch_wo
// null) with the write-only patch of the configuration. It must be nulled
// again before m is written to a plan or a state (withoutWriteOnly): the
// engine refuses a write-only value there.
func withWriteOnly(ctx context.Context, m model, config tfsdk.Config, diags *diag.Diagnostics) model {
	diags.Append(config.GetAttribute(ctx, pathPatchWO, &m.PatchWO)...)
	return m
}

func withoutWriteOnly(m *model) { m.PatchWO = types.StringNull() }

func contentPath(m model) path.Path {
	switch {
	case !m.PatchWO.IsNull():
		return pathPatchWO
	case !m.JSONPatch.IsNull():
		return path.Root("json_patch")
	case !m.MergePatch.IsNull():
		return path.Root("merge_patch")
	}
	return path.Root("patch")
}

// known reports whether the patch text is known at plan time.
func (m model) contentKnown() bool {
	return !m.Patch.IsUnknown() && !m.PatchWO.IsUnknown() && !m.JSONPatch.IsUnknown() && !m.MergePatch.IsUnknown()
}

// serverOwned are metadata fields the API server sets; a patch must not touch them.
var serverOwned = map[string]bool{
	"uid": true, "resourceVersion": true, "generation": true, "creationTimestamp": true,
	"deletionTimestamp": true, "deletionGracePeriodSeconds": true, "managedFields": true, "selfLink": true,
}

func parseContent(m model) (*content, error) {
	switch {
	case (!m.Patch.IsNull() && !m.Patch.IsUnknown()) || (!m.PatchWO.IsNull() && !m.PatchWO.IsUnknown()):
		text, attr := m.Patch, "patch"
		if m.Patch.IsNull() {
			text, attr = m.PatchWO, "patch_wo"
		}
		obj, err := parseObject(text.ValueString(), attr)
		if err != nil {
			return nil, err
		}
		body, err := json.Marshal(obj)
		return &content{patchType: ktypes.ApplyPatchType, body: body, object: obj}, err
	case !m.MergePatch.IsNull() && !m.MergePatch.IsUnknown():
		obj, err := parseObject(m.MergePatch.ValueString(), "merge_patch")
		if err != nil {
			return nil, err
		}
		body, err := json.Marshal(obj)
		return &content{patchType: ktypes.MergePatchType, body: body}, err
	case !m.JSONPatch.IsNull() && !m.JSONPatch.IsUnknown():
		body, err := parseJSONPatch(m.JSONPatch.ValueString())
		return &content{patchType: ktypes.JSONPatchType, body: body}, err
	}
	return nil, nil
}

// parseObject and parseJSONPatch decode with kubejson, as kubectl does, so
// every integer that fits int64 keeps its digits on the way to the server.
func parseObject(text, attr string) (map[string]any, error) {
	var doc any
	// kubejson decodes as kubectl does (numbers keep every digit kubectl keeps),
	// and a key given twice is an error, not the last one silently winning.
	if err := kubejson.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("%s is not valid YAML or JSON: %v", attr, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok && doc != nil {
		// Valid YAML of the wrong shape: "not valid YAML" would send the user
		// looking for a syntax error that is not there.
		return nil, fmt.Errorf("%s must be an object in the shape of the target, e.g. {metadata: {labels: {team: platform}}}, not a %s%s",
			attr, yamlKind(doc), jsonPatchHint(attr, doc))
	}
	if len(obj) == 0 {
		return nil, fmt.Errorf("%s is empty: give the fields to set, e.g. {metadata: {labels: {team: platform}}}", attr)
	}
	if _, ok := obj["status"]; ok {
		return nil, fmt.Errorf("%s sets status, which the object's controller owns; patch spec or metadata instead", attr)
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		for k := range meta {
			if serverOwned[k] {
				return nil, fmt.Errorf("%s sets metadata.%s, which the API server owns", attr, k)
			}
		}
	}
	return obj, nil
}

func yamlKind(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	default:
		return "number"
	}
}

func jsonPatchHint(attr string, doc any) string {
	if _, list := doc.([]any); list && attr == "merge_patch" {
		return "; for a list of RFC 6902 operations, use json_patch"
	}
	return ""
}

// parseJSONPatch checks every operation has what RFC 6902 requires, so a typo
// fails at plan with the operation's index rather than at the server.
func parseJSONPatch(text string) ([]byte, error) {
	var ops []map[string]any
	if err := kubejson.Unmarshal([]byte(text), &ops); err != nil {
		return nil, fmt.Errorf("json_patch must be a JSON array of operations: %v", err)
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("json_patch has no operations")
	}
	for i, op := range ops {
		name, _ := op["op"].(string)
		p, hasPath := op["path"].(string)
		_, hasValue := op["value"]
		from, hasFrom := op["from"].(string)
		switch name {
		case "add", "replace", "test":
			if !hasValue {
				return nil, fmt.Errorf("json_patch operation %d (%s) needs a value", i, name)
			}
		case "move", "copy":
			if !hasFrom {
				return nil, fmt.Errorf("json_patch operation %d (%s) needs from", i, name)
			}
			if err := checkPointer(from, i); err != nil {
				return nil, err
			}
		case "remove":
		case "":
			return nil, fmt.Errorf("json_patch operation %d has no op", i)
		default:
			return nil, fmt.Errorf("json_patch operation %d: op %q is not one of add, remove, replace, move, copy, test", i, name)
		}
		if !hasPath {
			return nil, fmt.Errorf("json_patch operation %d (%s) needs a path", i, name)
		}
		if err := checkPointer(p, i); err != nil {
			return nil, err
		}
	}
	return json.Marshal(ops)
}

func checkPointer(p string, i int) error {
	if p != "" && !strings.HasPrefix(p, "/") {
		return fmt.Errorf("json_patch operation %d: path %q must start with / (a JSON Pointer)", i, p)
	}
	parts := strings.Split(p, "/")
	unescape := strings.NewReplacer("~1", "/", "~0", "~")
	for j := range parts {
		parts[j] = unescape.Replace(parts[j])
	}
	if len(parts) > 1 && parts[1] == "status" {
		return fmt.Errorf("json_patch operation %d changes status, which the object's controller owns", i)
	}
	if len(parts) > 2 && parts[1] == "metadata" && serverOwned[parts[2]] {
		return fmt.Errorf("json_patch operation %d changes metadata.%s, which the API server owns", i, parts[2])
	}
	return nil
}
