import * as os from "os";
import * as path from "path";

import * as k8sconnect from "@k8sconnect/k8sconnect";
import * as pulumi from "@pulumi/pulumi";

// Installs a Helm chart (config `chart`: a chart directory, e.g. the greeter
// chart of examples/data-sources/k8sconnect_helm_template/chart) as a Helm
// release. Every object of the release is planned by a server-side dry run,
// so a preview shows, object by object and field by field, what `pulumi up`
// will change; each up writes a revision that `helm history` lists.
export = async () => {
    // docs:begin helm-release
    const config = new pulumi.Config();
    const kubeconfigPath =
        config.get("kubeconfigPath") ?? process.env.KUBECONFIG ?? path.join(os.homedir(), ".kube", "config");
    // By path: the kubeconfig's credentials stay out of the stack.
    const cluster = { kubeconfigFile: kubeconfigPath, context: config.get("context") };

    const greeter = new k8sconnect.HelmRelease("greeter", {
        clusterConnection: cluster,
        name: "greeter",
        namespace: config.get("namespace") ?? "greeter",
        createNamespace: true,
        // A chart directory; a repository or an oci:// registry works the same way.
        chart: config.require("chart"),
        // YAML documents (JSON is YAML), merged in order as `helm -f` merges files.
        values: [JSON.stringify({ replicas: 2 })],
        set: [{ name: "greeting", value: config.get("greeting") ?? "hello from a release" }],
        timeout: "2m",
    });
    // docs:end helm-release

    // docs:begin manifest-set
    // A bundle of manifests as one resource, each object planned by a dry run;
    // an object taken out of yamlBody is deleted by the next up. Its namespace
    // is the release's, so the set is planned once the release has made it.
    new k8sconnect.ManifestSet("bundle", {
        clusterConnection: cluster,
        namespace: greeter.namespace,
        yamlBody: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeter-extra}\ndata: {note: from a manifest set}\n",
    });
    // docs:end manifest-set

    return {
        // The release revision the last up wrote, as `helm history` lists it.
        revision: greeter.revision,
        // Per object, the fields k8sconnect owns, as the cluster holds them.
        objects: greeter.objects,
    };
};
