package scenarios

// Scenario "manifests": applies a multi-document YAML file (config
// manifests) the way Kubernetes needs it: CRDs first, then cluster-scoped
// objects (Namespaces, custom resources of those CRDs), then namespaced
// objects. GetYamlScoped splits the file and keys every document by
// <group>/<Kind>/[<namespace>/]<name>, so the resource names, and with them
// the stack, do not change when the documents are reordered. It also keys the
// file with GetYamlSplit and reads the kube-system Namespace with
// GetObjectOutput. The TypeScript and Python examples have the same scenario.

import (
	"os"
	"sort"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"

	"github.com/k8sconnect/k8sconnect/sdk/go/k8sconnect"
)

// Manifests is the program of the scenario "manifests".
func Manifests(ctx *pulumi.Context) error {
	// docs:begin yaml-scoped-apply
	cfg := config.New(ctx, "")
	// By path: the kubeconfig's credentials stay out of the stack. An empty
	// context is the kubeconfig's current-context.
	cluster := &k8sconnect.ClusterConnectionArgs{
		KubeconfigFile: pulumi.String(cfg.Require("kubeconfigPath")),
		Context:        pulumi.String(cfg.Get("context")),
	}

	content, err := os.ReadFile(cfg.Require("manifests"))
	if err != nil {
		return err
	}
	scoped, err := k8sconnect.GetYamlScoped(ctx, &k8sconnect.GetYamlScopedArgs{Content: pulumi.StringRef(string(content))})
	if err != nil {
		return err
	}

	apply := func(manifests map[string]string, after []pulumi.Resource) ([]pulumi.Resource, error) {
		var objects []pulumi.Resource
		for key, yamlBody := range manifests {
			obj, err := k8sconnect.NewKubernetesObject(ctx, key, &k8sconnect.KubernetesObjectArgs{
				ClusterConnection: cluster,
				YamlBody:          pulumi.String(yamlBody),
			}, pulumi.DependsOn(after))
			if err != nil {
				return nil, err
			}
			objects = append(objects, obj)
		}
		return objects, nil
	}
	crds, err := apply(scoped.Crds, nil)
	if err != nil {
		return err
	}
	clusterScoped, err := apply(scoped.ClusterScoped, crds)
	if err != nil {
		return err
	}
	namespaced, err := apply(scoped.Namespaced, clusterScoped)
	if err != nil {
		return err
	}
	// docs:end yaml-scoped-apply

	// docs:begin yaml-split-keys
	// GetYamlSplit keys the same documents by <group>/<Kind>/[<namespace>/]<name>
	// without sorting them by scope: a key names its object wherever the
	// document sits in the file.
	split, err := k8sconnect.GetYamlSplit(ctx, &k8sconnect.GetYamlSplitArgs{Content: pulumi.StringRef(string(content))})
	if err != nil {
		return err
	}
	// docs:end yaml-split-keys

	// docs:begin object-read
	// The uid of the kube-system Namespace is a common stand-in for the
	// cluster's id.
	kubeSystem := k8sconnect.GetObjectOutput(ctx, k8sconnect.GetObjectOutputArgs{
		ClusterConnection: cluster,
		ApiVersion:        pulumi.String("v1"),
		Kind:              pulumi.String("Namespace"),
		Name:              pulumi.String("kube-system"),
	})
	clusterID := kubeSystem.Object().ApplyT(func(object any) string {
		metadata, _ := object.(map[string]any)["metadata"].(map[string]any)
		uid, _ := metadata["uid"].(string)
		return uid
	}).(pulumi.StringOutput)
	// docs:end object-read

	keys := make([]string, 0, len(split.Manifests))
	for key := range split.Manifests {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	ctx.Export("applied", pulumi.Int(len(crds)+len(clusterScoped)+len(namespaced)))
	ctx.Export("keys", pulumi.ToStringArray(keys))
	ctx.Export("clusterId", clusterID)
	return nil
}
