import * as fs from "fs";
import * as os from "os";
import * as path from "path";

import * as k8sconnect from "@k8sconnect/k8sconnect";
import * as pulumi from "@pulumi/pulumi";

// The program is a function so that it runs the same under `pulumi up` and
// as an Automation API inline program.
export = async () => {
    const config = new pulumi.Config();

    // Which cluster: a kubeconfig file (config kubeconfigPath, else $KUBECONFIG,
    // else ~/.kube/config) and optionally one of its contexts.
    const kubeconfigPath =
        config.get("kubeconfigPath") ?? process.env.KUBECONFIG ?? path.join(os.homedir(), ".kube", "config");
    const clusterConnection = {
        kubeconfig: pulumi.secret(fs.readFileSync(kubeconfigPath, "utf8")),
        context: config.get("context"),
    };

    const namespace = config.get("namespace") ?? "default";
    const name = config.get("name") ?? "k8sconnect-quickstart";
    const message = config.get("message") ?? "hello from k8sconnect";

    const configMap = new k8sconnect.KubernetesObject("configmap", {
        clusterConnection,
        yamlBody: `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ${namespace}
data:
  message: ${JSON.stringify(message)}
`,
    });

    return {
        object: pulumi.interpolate`${configMap.resourceRef.namespace}/${configMap.resourceRef.name}`,
    };
};
