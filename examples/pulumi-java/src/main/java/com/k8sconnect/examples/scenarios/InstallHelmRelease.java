package com.k8sconnect.examples.scenarios;

import com.google.gson.Gson;
import com.k8sconnect.examples.Cluster;
import com.k8sconnect.k8sconnect.HelmRelease;
import com.k8sconnect.k8sconnect.HelmReleaseArgs;
import com.k8sconnect.k8sconnect.ManifestSet;
import com.k8sconnect.k8sconnect.ManifestSetArgs;
import com.k8sconnect.k8sconnect.inputs.HelmReleaseSetArgs;
import com.pulumi.Context;
import com.pulumi.Pulumi;
import java.util.Map;

/**
 * Installs a Helm chart (config chart: a chart directory, e.g. the greeter
 * chart of examples/data-sources/k8sconnect_helm_template/chart) as a Helm
 * release. Every object of the release is planned by a server-side dry run,
 * so a preview shows, object by object and field by field, what `pulumi up`
 * will change; each up writes a revision that `helm history` lists.
 *
 * Run it instead of the quickstart with -DmainClass (in .mvn/maven.config):
 * see README.md.
 */
public final class InstallHelmRelease {
    public static void main(String[] args) {
        Pulumi.run(InstallHelmRelease::program);
    }

    static void program(Context ctx) {
        // docs:begin helm-release
        var config = ctx.config();
        // By path: the kubeconfig's credentials stay out of the stack.
        var cluster = Cluster.connection(config);

        var greeter = new HelmRelease("greeter", HelmReleaseArgs.builder()
            .clusterConnection(cluster)
            .name("greeter")
            .namespace(config.get("namespace").orElse("greeter"))
            .createNamespace(true)
            // A chart directory; a repository or an oci:// registry works the same way.
            .chart(config.require("chart"))
            // YAML documents (JSON is YAML), merged in order as `helm -f` merges files.
            .values(new Gson().toJson(Map.of("replicas", 2)))
            .set(HelmReleaseSetArgs.builder()
                .name("greeting")
                .value(config.get("greeting").orElse("hello from a release"))
                .build())
            .timeout("2m")
            .build());
        // docs:end helm-release

        // docs:begin manifest-set
        // A bundle of manifests as one resource, each object planned by a dry run;
        // an object taken out of yamlBody is deleted by the next up. Its namespace
        // is the release's, so the set is planned once the release has made it.
        new ManifestSet("bundle", ManifestSetArgs.builder()
            .clusterConnection(cluster)
            .namespace(greeter.namespace())
            .yamlBody("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeter-extra}\ndata: {note: from a manifest set}\n")
            .build());
        // docs:end manifest-set

        // The release revision the last up wrote, as `helm history` lists it.
        ctx.export("revision", greeter.revision());
        // Per object, the fields k8sconnect owns, as the cluster holds them.
        ctx.export("objects", greeter.objects());
    }
}
