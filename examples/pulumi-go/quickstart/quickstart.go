// Package quickstart is the k8sconnect quickstart program: one ConfigMap,
// applied with Server-Side Apply.
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

// Program creates the ConfigMap; the stack config says where and what.
func Program(ctx *pulumi.Context) error {
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
	kubeconfig, err := os.ReadFile(kubeconfigPath)
	if err != nil {
		return err
	}

	namespace := orDefault(cfg.Get("namespace"), "default")
	name := orDefault(cfg.Get("name"), "k8sconnect-quickstart")
	message := orDefault(cfg.Get("message"), "hello from k8sconnect")

	configMap, err := k8sconnect.NewKubernetesObject(ctx, "configmap", &k8sconnect.KubernetesObjectArgs{
		ClusterConnection: &k8sconnect.KubernetesObjectClusterConnectionArgs{
			Kubeconfig: pulumi.ToSecret(pulumi.String(kubeconfig)).(pulumi.StringOutput),
			Context:    pulumi.StringPtrFromPtr(optional(cfg.Get("context"))),
		},
		YamlBody: pulumi.String(fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
data:
  message: %s
`, name, namespace, strconv.Quote(message))),
	})
	if err != nil {
		return err
	}

	ctx.Export("object", pulumi.Sprintf("%s/%s",
		configMap.ResourceRef.Namespace().Elem(), configMap.ResourceRef.Name().Elem()))
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
