package scenarios

// Scenario "wait-field": a LoadBalancer Service whose hostname the cloud fills
// in some time after the Service is created. A Wait on the field
// status.loadBalancer.ingress[0].hostname finishes once it is there, and its
// Status output carries the field (and only that field) to a ConfigMap that
// needs the hostname.
//
// Pulumi reads resources back from the cluster only on refresh, so a hostname
// that changes later reaches the ConfigMap on the next `pulumi up --refresh`
// (or with `refresh: always` in the project's options), which updates the
// ConfigMap and leaves the Wait and the Service as they are.

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"

	"github.com/k8sconnect/k8sconnect/sdk/go/k8sconnect"
)

// WaitField is the program of the scenario "wait-field".
func WaitField(ctx *pulumi.Context) error {
	// docs:begin wait-field
	cfg := config.New(ctx, "")
	kubeconfig, err := waitFieldKubeconfig(cfg.Get("kubeconfigPath"))
	if err != nil {
		return err
	}
	var kubeContext pulumi.StringPtrInput
	if c := cfg.Get("context"); c != "" {
		kubeContext = pulumi.String(c)
	}
	namespace := cfg.Require("namespace")

	cluster := k8sconnect.ClusterConnectionArgs{Kubeconfig: kubeconfig, Context: kubeContext}
	lb, err := k8sconnect.NewKubernetesObject(ctx, "lb", &k8sconnect.KubernetesObjectArgs{
		ClusterConnection: cluster,
		YamlBody: pulumi.String(fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: lb
  namespace: %s
spec:
  type: LoadBalancer
  selector: {app: lb}
  ports: [{port: 80}]
`, namespace)),
	})
	if err != nil {
		return err
	}

	// The object's resourceRef names it and how to reach it, and makes the
	// Wait depend on it.
	ready, err := k8sconnect.NewWait(ctx, "lb-hostname", &k8sconnect.WaitArgs{
		ResourceRef: lb.ResourceRef,
		WaitFor: k8sconnect.WaitWaitForArgs{
			Field:   pulumi.String("status.loadBalancer.ingress[0].hostname"),
			Timeout: pulumi.String("2m"),
		},
	})
	if err != nil {
		return err
	}
	hostname := ready.Status.ApplyT(waitFieldHostname).(pulumi.StringOutput)

	_, err = k8sconnect.NewKubernetesObject(ctx, "consumer", &k8sconnect.KubernetesObjectArgs{
		ClusterConnection: cluster,
		YamlBody: pulumi.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: consumer
  namespace: %s
data:
  hostname: %q
`, namespace, hostname),
	})
	if err != nil {
		return err
	}
	// docs:end wait-field

	ctx.Export("hostname", hostname)
	return nil
}

// waitFieldHostname digs the hostname out of the Wait's status, which holds
// the waited field at its place in the object:
// {"loadBalancer": {"ingress": [{"hostname": ...}]}}.
func waitFieldHostname(status any) (string, error) {
	st, _ := status.(map[string]any)
	lb, _ := st["loadBalancer"].(map[string]any)
	ingress, _ := lb["ingress"].([]any)
	if len(ingress) > 0 {
		first, _ := ingress[0].(map[string]any)
		if h, ok := first["hostname"].(string); ok {
			return h, nil
		}
	}
	return "", fmt.Errorf("the Wait's status has no loadBalancer.ingress[0].hostname: %v", status)
}

// waitFieldKubeconfig reads the kubeconfig: config kubeconfigPath, else
// $KUBECONFIG, else ~/.kube/config. It is a secret, so that it never shows in
// the stack's state or outputs.
func waitFieldKubeconfig(path string) (pulumi.StringOutput, error) {
	if path == "" {
		path = os.Getenv("KUBECONFIG")
	}
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return pulumi.StringOutput{}, err
		}
		path = filepath.Join(home, ".kube", "config")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return pulumi.StringOutput{}, err
	}
	return pulumi.ToSecret(pulumi.String(b)).(pulumi.StringOutput), nil
}
