import * as fs from "fs";
import * as os from "os";
import * as path from "path";

import * as k8sconnect from "@k8sconnect/k8sconnect";
import * as pulumi from "@pulumi/pulumi";

// Renders a Helm chart (config `chart`: a chart directory) against the cluster
// with getHelmTemplate and applies each of its objects as a KubernetesObject
// of its own: CRDs, then cluster-scoped objects, then namespaced ones, then
// the Secrets and objects holding setSensitives values, which come apart.
// Every object's preview shows what changes in it, field by field.
export = async () => {
    // docs:begin helm-template-apply
    const config = new pulumi.Config();
    const kubeconfigPath =
        config.get("kubeconfigPath") ?? process.env.KUBECONFIG ?? path.join(os.homedir(), ".kube", "config");
    const cluster = {
        kubeconfig: pulumi.secret(fs.readFileSync(kubeconfigPath, "utf8")),
        context: config.get("context"),
    };
    const namespace = config.get("namespace") ?? "shop";

    const ns = new k8sconnect.KubernetesObject("namespace", {
        clusterConnection: cluster,
        yamlBody: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
    });
    // The invoke takes plain values: it reads the same kubeconfig by its path.
    const chart = await k8sconnect.getHelmTemplate({
        clusterConnection: { kubeconfigFile: kubeconfigPath, context: config.get("context") },
        name: "web",
        namespace,
        chart: config.require("chart"),
        values: [JSON.stringify({ replicas: 2 })],
        setSensitive: [{ name: "greeting", value: config.require("greeting") }],
    });

    const apply = (manifests: { [key: string]: string }, after: pulumi.Resource[]) =>
        Object.entries(manifests).map(
            ([key, yamlBody]) =>
                new k8sconnect.KubernetesObject(
                    key,
                    { clusterConnection: cluster, yamlBody, sensitiveFields: chart.sensitiveFields[key] },
                    { dependsOn: after },
                ),
        );
    const crds = apply(chart.crds, []);
    const clusterScoped = apply(chart.clusterScoped, crds);
    const namespaced = apply(chart.namespaced, [...clusterScoped, ns]);
    const secret = apply(chart.sensitive, [ns]);
    // docs:end helm-template-apply

    return {
        applied: [...crds, ...clusterScoped, ...namespaced, ...secret].length,
        chartVersion: chart.chartVersion,
        kubeVersion: chart.kubeVersion,
        hooks: Object.keys(chart.hooks).sort(),
    };
};
