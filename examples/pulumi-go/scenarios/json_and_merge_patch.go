package scenarios

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"

	"github.com/k8sconnect/k8sconnect/sdk/go/k8sconnect"
)

// JSONAndMergePatch patches two ConfigMaps that another tool owns, in the
// patch types Server-Side Apply cannot express: an RFC 6902 JSON Patch (every
// operation, guarded by a test) on "cfg", and an RFC 7386 merge patch that
// sets one key and deletes another on "merge".
func JSONAndMergePatch(ctx *pulumi.Context) error {
	// docs:begin patch-json
	cfg := config.New(ctx, "")
	cluster, err := clusterConnection(cfg)
	if err != nil {
		return err
	}
	namespace := cfg.Require("namespace")
	keep := cfg.Get("keep")
	if keep == "" {
		keep = "x"
	}

	ops, err := json.Marshal([]map[string]any{
		// The server applies all operations or none: if data.keep is not what
		// this program expects, the preview fails and nothing changes.
		{"op": "test", "path": "/data/keep", "value": keep},
		// "add" fails when the parent is missing, so make sure the map exists
		// (this replaces annotations the object might already have).
		{"op": "add", "path": "/metadata/annotations", "value": map[string]string{}},
		// "~1" escapes "/" in a JSON Pointer: the key is prometheus.io/scrape.
		{"op": "add", "path": "/metadata/annotations/prometheus.io~1scrape", "value": "true"},
		{"op": "replace", "path": "/data/a", "value": "one"},
		{"op": "remove", "path": "/data/b"},
		{"op": "move", "from": "/data/c", "path": "/data/moved"},
		{"op": "copy", "from": "/data/d", "path": "/data/copied"},
	})
	if err != nil {
		return err
	}
	jsonPatch, err := k8sconnect.NewPatch(ctx, "json", &k8sconnect.PatchArgs{
		ClusterConnection: cluster,
		Target: k8sconnect.PatchTargetArgs{
			ApiVersion: pulumi.String("v1"),
			Kind:       pulumi.String("ConfigMap"),
			Name:       pulumi.String("cfg"),
			Namespace:  pulumi.String(namespace),
		},
		JsonPatch:     pulumi.String(string(ops)),
		TakeOwnership: pulumi.Bool(true),
	})
	if err != nil {
		return err
	}

	// In a merge patch, null deletes the key.
	merge, err := json.Marshal(map[string]any{"data": map[string]any{"added": "z", "drop": nil}})
	if err != nil {
		return err
	}
	mergePatch, err := k8sconnect.NewPatch(ctx, "merge", &k8sconnect.PatchArgs{
		ClusterConnection: cluster,
		Target: k8sconnect.PatchTargetArgs{
			ApiVersion: pulumi.String("v1"),
			Kind:       pulumi.String("ConfigMap"),
			Name:       pulumi.String("merge"),
			Namespace:  pulumi.String(namespace),
		},
		MergePatch:    pulumi.String(string(merge)),
		TakeOwnership: pulumi.Bool(true),
	})
	if err != nil {
		return err
	}
	// docs:end patch-json

	ctx.Export("jsonManagedFields", jsonPatch.ManagedFields)
	ctx.Export("mergeManagedFields", mergePatch.ManagedFields)
	return nil
}

// clusterConnection reads the kubeconfig named by config kubeconfigPath (else
// $KUBECONFIG, else ~/.kube/config) and selects config context, if set.
func clusterConnection(cfg *config.Config) (*k8sconnect.ClusterConnectionArgs, error) {
	path := cfg.Get("kubeconfigPath")
	if path == "" {
		path = os.Getenv("KUBECONFIG")
	}
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		path = filepath.Join(home, ".kube", "config")
	}
	kubeconfig, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	conn := &k8sconnect.ClusterConnectionArgs{
		Kubeconfig: pulumi.ToSecret(pulumi.String(kubeconfig)).(pulumi.StringOutput),
	}
	if c := cfg.Get("context"); c != "" {
		conn.Context = pulumi.String(c)
	}
	return conn, nil
}
