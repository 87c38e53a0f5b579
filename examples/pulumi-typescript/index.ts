import * as os from "os";
import * as path from "path";

import * as k8sconnect from "@k8sconnect/k8sconnect";
import * as pulumi from "@pulumi/pulumi";

// The quickstart of examples/terraform/quickstart: a namespace and a ConfigMap
// in it. The program is a function so that it runs the same under `pulumi up`
// and as an Automation API inline program.
export = async () => {
    // docs:begin object-quickstart
    const config = new pulumi.Config();

    // Which cluster: a kubeconfig file (config kubeconfigPath, else $KUBECONFIG,
    // else ~/.kube/config) and optionally one of its contexts.
    const kubeconfigPath =
        config.get("kubeconfigPath") ?? process.env.KUBECONFIG ?? path.join(os.homedir(), ".kube", "config");
    const cluster = {
        // By path, never the content: the credentials stay out of the stack.
        kubeconfigFile: kubeconfigPath,
        context: config.get("context"),
    };
    const namespace = config.get("namespace") ?? "k8sconnect-pulumi";
    // Change it and run `pulumi up` again to see an in-place update.
    const greeting = config.get("greeting") ?? "hello";

    const ns = new k8sconnect.KubernetesObject("ns", {
        clusterConnection: cluster,
        yamlBody: `apiVersion: v1
kind: Namespace
metadata:
  name: ${namespace}
`,
    });

    const configMap = new k8sconnect.KubernetesObject("configmap", {
        clusterConnection: cluster,
        yamlBody: pulumi.interpolate`apiVersion: v1
kind: ConfigMap
metadata:
  name: greeting
  namespace: ${ns.resourceRef.name}
data:
  greeting: ${JSON.stringify(greeting)}
`,
    });
    // docs:end object-quickstart

    return {
        // Where the ConfigMap lives.
        configmap: pulumi.interpolate`${configMap.resourceRef.namespace}/${configMap.resourceRef.name}`,
    };
};
