import * as fs from "fs";
import * as os from "os";
import * as path from "path";

import * as k8sconnect from "@k8sconnect/k8sconnect";
import * as pulumi from "@pulumi/pulumi";

// Routes the EKS VPC CNI (the aws-node DaemonSet, which EKS creates and owns)
// through an HTTP proxy by patching in two env vars. The patch owns only
// those two, so the other env vars, images and containers stay EKS's, and
// destroying it leaves the proxy settings in place for EKS to take back.
export = async () => {
    // docs:begin patch-aws-node
    const config = new pulumi.Config();
    const kubeconfigPath =
        config.get("kubeconfigPath") ?? process.env.KUBECONFIG ?? path.join(os.homedir(), ".kube", "config");
    const cluster = {
        kubeconfig: pulumi.secret(fs.readFileSync(kubeconfigPath, "utf8")),
        context: config.get("context"),
    };

    const proxy = new k8sconnect.Patch("aws-node-proxy", {
        clusterConnection: cluster,
        target: {
            apiVersion: "apps/v1",
            kind: "DaemonSet",
            name: "aws-node",
            namespace: config.get("namespace") ?? "kube-system",
        },
        // Containers and env are lists keyed by name: this adds to the
        // aws-node container's env instead of replacing the list.
        patch: JSON.stringify({
            spec: {
                template: {
                    spec: {
                        containers: [
                            {
                                name: "aws-node",
                                env: [
                                    { name: "HTTP_PROXY", value: config.get("httpProxy") ?? "http://proxy:3128" },
                                    { name: "NO_PROXY", value: config.get("noProxy") ?? ".svc,.cluster.local" },
                                ],
                            },
                        ],
                    },
                },
            },
        }),
        // EKS owns these fields; the patch takes them by force.
        takeOwnership: true,
    });
    // docs:end patch-aws-node

    return {
        // The patched fields and their values, keyed by path.
        managedFields: proxy.managedFields,
        // Who owned each field before: the manager that may change it back.
        previousOwners: proxy.previousOwners,
    };
};
