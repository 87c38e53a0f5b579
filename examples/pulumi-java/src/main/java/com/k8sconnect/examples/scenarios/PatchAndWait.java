package com.k8sconnect.examples.scenarios;

import com.google.gson.Gson;
import com.google.gson.reflect.TypeToken;
import com.k8sconnect.examples.Cluster;
import com.k8sconnect.k8sconnect.Patch;
import com.k8sconnect.k8sconnect.PatchArgs;
import com.k8sconnect.k8sconnect.Wait;
import com.k8sconnect.k8sconnect.WaitArgs;
import com.k8sconnect.k8sconnect.inputs.PatchTargetArgs;
import com.k8sconnect.k8sconnect.inputs.ResourceRefArgs;
import com.k8sconnect.k8sconnect.inputs.WaitWaitForArgs;
import com.pulumi.Context;
import com.pulumi.Pulumi;
import com.pulumi.resources.CustomResourceOptions;
import java.util.Map;
import java.util.TreeMap;

/**
 * Sets an env var on a Deployment that another tool (a Helm release, say)
 * manages, and waits until the rollout that the change starts has finished.
 * The Patch owns only that env var; the Wait is a resource of its own, so a
 * rollout that times out fails `pulumi up` without touching the Patch, and the
 * next `pulumi up` waits again.
 *
 * Run it instead of the quickstart with -DmainClass (in .mvn/maven.config):
 * see README.md.
 */
public final class PatchAndWait {
    public static void main(String[] args) {
        Pulumi.run(PatchAndWait::program);
    }

    static void program(Context ctx) {
        // docs:begin patch-and-wait
        var config = ctx.config();
        var cluster = Cluster.connection(config);
        var namespace = config.require("namespace");
        var name = config.get("name").orElse("web");
        var greeting = config.get("greeting").orElse("hello");
        // Annotations for the new pods (a JSON object). The tests use one to
        // hold the pods back for a while, as a slow node would.
        Map<String, String> podAnnotations = new Gson().fromJson(
            config.get("podAnnotations").orElse("{}"), new TypeToken<Map<String, String>>() {}.getType());

        // A strategic-merge style patch: containers and env merge by name, so
        // the other containers and env vars stay the other tool's. Values are
        // written as JSON strings (valid YAML, whatever they hold), and the
        // annotations sorted: the patch is text, compared with the last one
        // at every preview, and a Java Map's order can change between runs.
        var gson = new Gson();
        var podMetadata = podAnnotations.isEmpty()
            ? ""
            : "metadata: {annotations: " + gson.toJson(new TreeMap<>(podAnnotations)) + "}";
        var body = """
            spec:
              template:
                %s
                spec:
                  containers:
                    - name: web
                      env:
                        - name: GREETING
                          value: %s
            """.formatted(podMetadata, gson.toJson(greeting));

        var patch = new Patch("greeting", PatchArgs.builder()
            .clusterConnection(cluster)
            .target(PatchTargetArgs.builder()
                .apiVersion("apps/v1")
                .kind("Deployment")
                .name(name)
                .namespace(namespace)
                .build())
            .patch(body)
            // The other tool owns these fields: the patch takes them by force.
            .takeOwnership(true)
            .build());

        // The rollout the patch starts; dependsOn orders the Wait after it.
        new Wait("rolled-out", WaitArgs.builder()
            .resourceRef(ResourceRefArgs.builder()
                .apiVersion("apps/v1")
                .kind("Deployment")
                .name(name)
                .namespace(namespace)
                .clusterConnection(cluster)
                .build())
            .waitFor(WaitWaitForArgs.builder().rollout(true).timeout("3m").build())
            .build(),
            CustomResourceOptions.builder().dependsOn(patch).build());
        // docs:end patch-and-wait

        ctx.export("managedFields", patch.managedFields());
        ctx.export("previousOwners", patch.previousOwners());
    }
}
