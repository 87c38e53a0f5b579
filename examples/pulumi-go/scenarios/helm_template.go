package scenarios

// Scenario "helm-template": renders a Helm chart (config chart: a chart
// directory) against the cluster with GetHelmTemplate and applies each of its
// objects as a KubernetesObject of its own: CRDs, then cluster-scoped objects,
// then namespaced ones, then the Secrets and objects holding SetSensitive
// values, which come apart. Every object's preview shows what changes in it,
// field by field. The TypeScript, Python and YAML examples have the same
// scenario.

import (
	"encoding/json"
	"sort"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"

	"github.com/k8sconnect/k8sconnect/sdk/go/k8sconnect"
)

// HelmTemplate is the program of the scenario "helm-template".
func HelmTemplate(ctx *pulumi.Context) error {
	// docs:begin helm-template-apply
	cfg := config.New(ctx, "")
	// By path: the kubeconfig's credentials stay out of the stack. An empty
	// context is the kubeconfig's current-context.
	kubeconfigPath, kubeContext := cfg.Require("kubeconfigPath"), cfg.Get("context")
	cluster := &k8sconnect.ClusterConnectionArgs{
		KubeconfigFile: pulumi.String(kubeconfigPath),
		Context:        pulumi.String(kubeContext),
	}
	namespace := cfg.Get("namespace")
	if namespace == "" {
		namespace = "shop"
	}

	nsBody, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}})
	if err != nil {
		return err
	}
	ns, err := k8sconnect.NewKubernetesObject(ctx, "namespace", &k8sconnect.KubernetesObjectArgs{
		ClusterConnection: cluster,
		YamlBody:          pulumi.String(string(nsBody)),
	})
	if err != nil {
		return err
	}
	values, err := json.Marshal(map[string]any{"replicas": 2})
	if err != nil {
		return err
	}
	// The invoke takes plain values: the same kubeconfig, by its path.
	chart, err := k8sconnect.GetHelmTemplate(ctx, &k8sconnect.GetHelmTemplateArgs{
		ClusterConnection: &k8sconnect.ClusterConnection{KubeconfigFile: &kubeconfigPath, Context: &kubeContext},
		Name:              "web",
		Namespace:         &namespace,
		Chart:             cfg.Require("chart"),
		Values:            []string{string(values)},
		SetSensitive:      []k8sconnect.GetHelmTemplateSetSensitive{{Name: "greeting", Value: cfg.Require("greeting")}},
	})
	if err != nil {
		return err
	}

	apply := func(manifests map[string]string, after []pulumi.Resource) ([]pulumi.Resource, error) {
		var objects []pulumi.Resource
		for key, yamlBody := range manifests {
			args := &k8sconnect.KubernetesObjectArgs{
				ClusterConnection: cluster,
				YamlBody:          pulumi.String(yamlBody),
			}
			// Only the objects holding a SetSensitive value outside a
			// Secret's data have fields to hide.
			if fields, ok := chart.SensitiveFields[key]; ok {
				args.SensitiveFields = pulumi.ToStringArray(fields)
			}
			obj, err := k8sconnect.NewKubernetesObject(ctx, key, args, pulumi.DependsOn(after))
			if err != nil {
				return nil, err
			}
			objects = append(objects, obj)
		}
		return objects, nil
	}
	crds, err := apply(chart.Crds, nil)
	if err != nil {
		return err
	}
	clusterScoped, err := apply(chart.ClusterScoped, crds)
	if err != nil {
		return err
	}
	namespaced, err := apply(chart.Namespaced, append(clusterScoped, ns))
	if err != nil {
		return err
	}
	secret, err := apply(chart.Sensitive, []pulumi.Resource{ns})
	if err != nil {
		return err
	}
	// docs:end helm-template-apply

	hooks := make([]string, 0, len(chart.Hooks))
	for key := range chart.Hooks {
		hooks = append(hooks, key)
	}
	sort.Strings(hooks)
	ctx.Export("applied", pulumi.Int(len(crds)+len(clusterScoped)+len(namespaced)+len(secret)))
	ctx.Export("chartVersion", pulumi.String(chart.ChartVersion))
	ctx.Export("kubeVersion", pulumi.String(chart.KubeVersion))
	ctx.Export("hooks", pulumi.ToStringArray(hooks))
	return nil
}
