package patch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/scope"
)

// send sends the patch to the target under manager; with dryRun the server
// computes the result without storing it, for every patch type.
//
// A non-empty resourceVersion binds the patch to that version of the target:
// the server refuses it if the target changed since it was read.
func send(ctx context.Context, c *connection.Client, target manifest.Identity, ct *content, manager string, dryRun bool,
	resourceVersion string) (*unstructured.Unstructured, error) {
	mapping, err := c.Mapping(target.GVK())
	if err != nil {
		return nil, err
	}
	body := ct.body
	if resourceVersion != "" {
		if body, err = bindToVersion(ct, resourceVersion); err != nil {
			return nil, err
		}
	}
	opts := metav1.PatchOptions{FieldManager: manager, FieldValidation: "Strict"}
	if ct.patchType == ktypes.ApplyPatchType {
		obj := map[string]any{}
		for k, v := range ct.object {
			obj[k] = v
		}
		obj["apiVersion"], obj["kind"] = target.APIVersion, target.Kind
		md, _ := obj["metadata"].(map[string]any)
		md = copyMap(md)
		md["name"] = target.Name
		if scope.Namespaced(mapping) {
			md["namespace"] = target.Namespace
		}
		if resourceVersion != "" {
			md["resourceVersion"] = resourceVersion
		}
		obj["metadata"] = md
		if body, err = json.Marshal(obj); err != nil {
			return nil, err
		}
		force := true
		opts.Force = &force
	}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return c.Resource(mapping, target.Namespace).Patch(ctx, target.Name, ct.patchType, body, opts)
}

// bindToVersion adds a resourceVersion precondition to a merge patch (the
// server treats metadata.resourceVersion in a patch as one) or a JSON Patch (a
// leading test operation). Apply patches get it in send.
func bindToVersion(ct *content, resourceVersion string) ([]byte, error) {
	switch ct.patchType {
	case ktypes.MergePatchType:
		// kubejson, not encoding/json: the body's integers must keep every
		// digit on the way back out.
		var obj map[string]any
		if err := kubejson.Unmarshal(ct.body, &obj); err != nil {
			return nil, err
		}
		md, _ := obj["metadata"].(map[string]any)
		md = copyMap(md)
		md["resourceVersion"] = resourceVersion
		obj["metadata"] = md
		return json.Marshal(obj)
	case ktypes.JSONPatchType:
		test, err := json.Marshal(map[string]string{"op": "test", "path": "/metadata/resourceVersion", "value": resourceVersion})
		if err != nil {
			return nil, err
		}
		rest := bytes.TrimSpace(ct.body)
		if len(rest) < 2 || rest[0] != '[' {
			return nil, fmt.Errorf("json_patch is not a JSON array")
		}
		inner := bytes.TrimSpace(rest[1 : len(rest)-1])
		out := append([]byte("["), test...)
		if len(inner) > 0 {
			out = append(append(out, ','), inner...)
		}
		return append(out, ']'), nil
	}
	return ct.body, nil
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// checkTargetMetadata refuses an apply patch that names another object.
func checkTargetMetadata(ct *content, target manifest.Identity) error {
	if ct.object == nil {
		return nil
	}
	if v, ok := ct.object["apiVersion"].(string); ok && v != target.APIVersion {
		return fmt.Errorf("patch sets apiVersion %q but target.api_version is %q; leave apiVersion out of the patch", v, target.APIVersion)
	}
	if v, ok := ct.object["kind"].(string); ok && v != target.Kind {
		return fmt.Errorf("patch sets kind %q but target.kind is %q; leave kind out of the patch", v, target.Kind)
	}
	md, _ := ct.object["metadata"].(map[string]any)
	if v, ok := md["name"].(string); ok && v != target.Name {
		return fmt.Errorf("patch sets metadata.name %q but target.name is %q; leave it out of the patch", v, target.Name)
	}
	if v, ok := md["namespace"].(string); ok && v != target.Namespace {
		return fmt.Errorf("patch sets metadata.namespace %q but target.namespace is %q; leave it out of the patch", v, target.Namespace)
	}
	return nil
}
