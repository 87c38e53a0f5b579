import * as fs from "fs";
import * as os from "os";
import * as path from "path";

import * as k8sconnect from "@k8sconnect/k8sconnect";
import * as pulumi from "@pulumi/pulumi";

// Gates one Deployment on another's rollout: a Wait on "web" with rollout=true
// finishes only once all of web's replicas are ready and available, as
// `kubectl rollout status` judges it, and "after" depends on the Wait, so it is
// created only then. The Wait is a resource of its own so that a rollout that
// times out fails the update without marking web for replacement: the next
// `pulumi up` waits again on the same Deployment.
export = async () => {
    // docs:begin wait-rollout
    const config = new pulumi.Config();
    const kubeconfigPath =
        config.get("kubeconfigPath") ?? process.env.KUBECONFIG ?? path.join(os.homedir(), ".kube", "config");
    const cluster = {
        kubeconfig: pulumi.secret(fs.readFileSync(kubeconfigPath, "utf8")),
        context: config.get("context"),
    };
    const namespace = config.require("namespace");
    // Annotations for web's pods (JSON object). The tests use it to hold the
    // pods back for a while, as a slow node would.
    const podAnnotations = config.getObject<Record<string, string>>("podAnnotations") ?? {};

    const deployment = (name: string, replicas: number, annotations: Record<string, string>) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
      annotations: ${JSON.stringify(annotations)}
    spec:
      containers: [{name: app, image: nginx}]
`;

    const web = new k8sconnect.KubernetesObject("web", {
        clusterConnection: cluster,
        yamlBody: deployment("web", 3, podAnnotations),
    });

    const rolledOut = new k8sconnect.Wait("web-rolled-out", {
        resourceRef: web.resourceRef,
        waitFor: { rollout: true, timeout: "3m" },
    });

    // dependsOn, not a value of the Wait: nothing of web's flows into "after",
    // only the ordering.
    new k8sconnect.KubernetesObject(
        "after",
        { clusterConnection: cluster, yamlBody: deployment("after", 1, {}) },
        { dependsOn: [rolledOut] },
    );
    // docs:end wait-rollout

    return {
        waited: rolledOut.id,
        // Null: only field waits fill status.
        status: rolledOut.status,
    };
};
