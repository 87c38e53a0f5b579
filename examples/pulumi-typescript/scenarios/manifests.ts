import * as fs from "fs";
import * as os from "os";
import * as path from "path";

import * as k8sconnect from "@k8sconnect/k8sconnect";
import * as pulumi from "@pulumi/pulumi";

// Applies a multi-document YAML file (config `manifests`) the way Kubernetes
// needs it: CRDs first, then cluster-scoped objects (Namespaces, custom
// resources of those CRDs), then namespaced objects. getYamlScoped splits the
// file and keys every document by <group>/<Kind>/[<namespace>/]<name>, so the
// resource names, and with them the stack, do not change when the documents
// are reordered. It also keys the file with getYamlSplit and reads the
// kube-system Namespace with getObject.
export = async () => {
    // docs:begin yaml-scoped-apply
    const config = new pulumi.Config();
    const kubeconfigPath =
        config.get("kubeconfigPath") ?? process.env.KUBECONFIG ?? path.join(os.homedir(), ".kube", "config");
    const cluster = {
        kubeconfig: pulumi.secret(fs.readFileSync(kubeconfigPath, "utf8")),
        context: config.get("context"),
    };

    const scoped = await k8sconnect.getYamlScoped({ content: fs.readFileSync(config.require("manifests"), "utf8") });

    const apply = (manifests: { [key: string]: string }, after: pulumi.Resource[]) =>
        Object.entries(manifests).map(
            ([key, yamlBody]) =>
                new k8sconnect.KubernetesObject(key, { clusterConnection: cluster, yamlBody }, { dependsOn: after }),
        );
    const crds = apply(scoped.crds, []);
    const clusterScoped = apply(scoped.clusterScoped, crds);
    const namespaced = apply(scoped.namespaced, clusterScoped);
    // docs:end yaml-scoped-apply

    // docs:begin yaml-split-keys
    // getYamlSplit keys the same documents by <group>/<Kind>/[<namespace>/]<name>
    // without sorting them by scope: a key names its object wherever the
    // document sits in the file.
    const split = await k8sconnect.getYamlSplit({ content: fs.readFileSync(config.require("manifests"), "utf8") });
    // docs:end yaml-split-keys

    // docs:begin object-read
    // The uid of the kube-system Namespace is a common stand-in for the
    // cluster's id.
    const kubeSystem = k8sconnect.getObjectOutput({
        clusterConnection: cluster,
        apiVersion: "v1",
        kind: "Namespace",
        name: "kube-system",
    });
    const clusterId = kubeSystem.object.apply((object) => object.metadata.uid);
    // docs:end object-read

    return {
        applied: [...crds, ...clusterScoped, ...namespaced].length,
        keys: Object.keys(split.manifests).sort(),
        clusterId,
    };
};
