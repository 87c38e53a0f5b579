// Package quickstart is the quickstart of examples/terraform/quickstart: a
// namespace and a ConfigMap in it, applied with Server-Side Apply.
package quickstart

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"

	"github.com/k8sconnect/k8sconnect/sdk/go/k8sconnect"
)

// Program creates the namespace and the ConfigMap; the stack config says where
// and what.
func Program(ctx *pulumi.Context) error {
	// docs:begin object-quickstart
	cfg := config.New(ctx, "")

	// Which cluster: a kubeconfig file (config kubeconfigPath, else $KUBECONFIG,
	// else ~/.kube/config) and optionally one of its contexts.
	kubeconfigPath := cfg.Get("kubeconfigPath")
	if kubeconfigPath == "" {
		kubeconfigPath = os.Getenv("KUBECONFIG")
	}
	if kubeconfigPath == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return err
		}
		kubeconfigPath = filepath.Join(home, ".kube", "config")
	}
	// By path, never the content: the credentials stay out of the stack.
	cluster := &k8sconnect.ClusterConnectionArgs{
		KubeconfigFile: pulumi.String(kubeconfigPath),
		Context:        pulumi.StringPtrFromPtr(optional(cfg.Get("context"))),
	}
	namespace := orDefault(cfg.Get("namespace"), "k8sconnect-pulumi")
	// Change it and run `pulumi up` again to see an in-place update.
	greeting := orDefault(cfg.Get("greeting"), "hello")

	ns, err := k8sconnect.NewKubernetesObject(ctx, "ns", &k8sconnect.KubernetesObjectArgs{
		ClusterConnection: cluster,
		YamlBody: pulumi.String(fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
`, namespace)),
	})
	if err != nil {
		return err
	}

	configMap, err := k8sconnect.NewKubernetesObject(ctx, "configmap", &k8sconnect.KubernetesObjectArgs{
		ClusterConnection: cluster,
		YamlBody: pulumi.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: greeting
  namespace: %s
data:
  greeting: %s
`, ns.ResourceRef.Name(), strconv.Quote(greeting)),
	})
	if err != nil {
		return err
	}
	// docs:end object-quickstart

	// Where the ConfigMap lives.
	ctx.Export("configmap", pulumi.Sprintf("%s/%s",
		configMap.ResourceRef.Namespace().Elem(), configMap.ResourceRef.Name()))
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func optional(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}
