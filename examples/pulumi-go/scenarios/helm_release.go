package scenarios

// Scenario "helm-release": installs a Helm chart (config chart: a chart
// directory, e.g. the greeter chart of
// examples/data-sources/k8sconnect_helm_template/chart) as a Helm release.
// Every object of the release is planned by a server-side dry run, so a
// preview shows, object by object and field by field, what `pulumi up` will
// change; each up writes a revision that `helm history` lists. The
// TypeScript, Python, YAML and Java examples have the same scenario.

import (
	"encoding/json"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"

	"github.com/k8sconnect/k8sconnect/sdk/go/k8sconnect"
)

// HelmRelease is the program of the scenario "helm-release".
func HelmRelease(ctx *pulumi.Context) error {
	// docs:begin helm-release
	cfg := config.New(ctx, "")
	// By path: the kubeconfig's credentials stay out of the stack. An empty
	// context is the kubeconfig's current-context.
	cluster := &k8sconnect.ClusterConnectionArgs{
		KubeconfigFile: pulumi.String(cfg.Require("kubeconfigPath")),
		Context:        pulumi.String(cfg.Get("context")),
	}
	namespace := cfg.Get("namespace")
	if namespace == "" {
		namespace = "greeter"
	}
	greeting := cfg.Get("greeting")
	if greeting == "" {
		greeting = "hello from a release"
	}
	// YAML documents (JSON is YAML), merged in order as `helm -f` merges files.
	values, err := json.Marshal(map[string]any{"replicas": 2})
	if err != nil {
		return err
	}

	greeter, err := k8sconnect.NewHelmRelease(ctx, "greeter", &k8sconnect.HelmReleaseArgs{
		ClusterConnection: cluster,
		Name:              pulumi.String("greeter"),
		Namespace:         pulumi.String(namespace),
		CreateNamespace:   pulumi.Bool(true),
		// A chart directory; a repository or an oci:// registry works the same way.
		Chart:  pulumi.String(cfg.Require("chart")),
		Values: pulumi.StringArray{pulumi.String(string(values))},
		Set: k8sconnect.HelmReleaseSetArray{
			k8sconnect.HelmReleaseSetArgs{Name: pulumi.String("greeting"), Value: pulumi.String(greeting)},
		},
		Timeout: pulumi.String("2m"),
	})
	if err != nil {
		return err
	}
	// docs:end helm-release

	// docs:begin manifest-set
	// A bundle of manifests as one resource, each object planned by a dry run;
	// an object taken out of YamlBody is deleted by the next up. Its namespace
	// is the release's, so the set is planned once the release has made it.
	if _, err := k8sconnect.NewManifestSet(ctx, "bundle", &k8sconnect.ManifestSetArgs{
		ClusterConnection: cluster,
		Namespace:         greeter.Namespace,
		YamlBody:          pulumi.String("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeter-extra}\ndata: {note: from a manifest set}\n"),
	}); err != nil {
		return err
	}
	// docs:end manifest-set

	// The release revision the last up wrote, as `helm history` lists it.
	ctx.Export("revision", greeter.Revision)
	// Per object, the fields k8sconnect owns, as the cluster holds them.
	ctx.Export("objects", greeter.Objects)
	return nil
}
