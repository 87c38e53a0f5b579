package com.k8sconnect.examples;

import com.google.gson.Gson;
import com.k8sconnect.k8sconnect.KubernetesObject;
import com.k8sconnect.k8sconnect.KubernetesObjectArgs;
import com.pulumi.Context;
import com.pulumi.Pulumi;

/**
 * The quickstart of examples/terraform/quickstart: a namespace and a ConfigMap
 * in it, applied with Server-Side Apply.
 */
public final class App {
    public static void main(String[] args) {
        Pulumi.run(App::program);
    }

    static void program(Context ctx) {
        // docs:begin object-quickstart
        var config = ctx.config();

        // Which cluster, by path, never the content: the credentials stay out
        // of the stack.
        var cluster = Cluster.connection(config);
        var namespace = config.get("namespace").orElse("k8sconnect-pulumi");
        // Change it and run `pulumi up` again to see an in-place update.
        var greeting = config.get("greeting").orElse("hello");

        var ns = new KubernetesObject("ns", KubernetesObjectArgs.builder()
            .clusterConnection(cluster)
            .yamlBody("""
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: %s
                """.formatted(namespace))
            .build());

        var configMap = new KubernetesObject("configmap", KubernetesObjectArgs.builder()
            .clusterConnection(cluster)
            .yamlBody(ns.resourceRef().applyValue(ref -> """
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: greeting
                  namespace: %s
                data:
                  greeting: %s
                """.formatted(ref.name(), new Gson().toJson(greeting))))
            .build());
        // docs:end object-quickstart

        // Where the ConfigMap lives.
        ctx.export("configmap", configMap.resourceRef().applyValue(
            ref -> ref.namespace().orElse("") + "/" + ref.name()));
    }
}
