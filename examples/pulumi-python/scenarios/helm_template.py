"""Renders a Helm chart (config `chart`: a chart directory) against the cluster
with get_helm_template and applies each of its objects as a KubernetesObject
of its own: CRDs, then cluster-scoped objects, then namespaced ones, then the
Secrets and objects holding set_sensitive values, which come apart. Every
object's preview shows what changes in it, field by field. The TypeScript, Go
and YAML examples have the same scenario."""

import json
import os

import pulumi
import pulumi_k8sconnect as k8sconnect

# docs:begin helm-template-apply
config = pulumi.Config()
kubeconfig_path = (
    config.get("kubeconfigPath")
    or os.environ.get("KUBECONFIG")
    or os.path.expanduser("~/.kube/config")
)
with open(kubeconfig_path, encoding="utf-8") as f:
    cluster = {
        "kubeconfig": pulumi.Output.secret(f.read()),
        "context": config.get("context"),
    }
namespace = config.get("namespace") or "shop"

ns = k8sconnect.KubernetesObject(
    "namespace",
    cluster_connection=cluster,
    yaml_body=json.dumps(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    ),
)
# The invoke takes plain values: it reads the same kubeconfig by its path.
# An Args class, not a dict: an invoke passes a dict's keys as they are, and
# the provider knows kubeconfigFile, not kubeconfig_file.
chart = k8sconnect.get_helm_template(
    cluster_connection=k8sconnect.ClusterConnectionArgs(
        kubeconfig_file=kubeconfig_path,
        context=config.get("context"),
    ),
    name="web",
    namespace=namespace,
    chart=config.require("chart"),
    values=[json.dumps({"replicas": 2})],
    set_sensitive=[{"name": "greeting", "value": config.require("greeting")}],
)


def apply(manifests: dict, after: list) -> list:
    return [
        k8sconnect.KubernetesObject(
            key,
            cluster_connection=cluster,
            yaml_body=body,
            sensitive_fields=chart.sensitive_fields.get(key),
            opts=pulumi.ResourceOptions(depends_on=after),
        )
        for key, body in manifests.items()
    ]


crds = apply(chart.crds, [])
cluster_scoped = apply(chart.cluster_scoped, crds)
namespaced = apply(chart.namespaced, [*cluster_scoped, ns])
secret = apply(chart.sensitive, [ns])
# docs:end helm-template-apply

pulumi.export("applied", len(crds) + len(cluster_scoped) + len(namespaced) + len(secret))
pulumi.export("chartVersion", chart.chart_version)
pulumi.export("kubeVersion", chart.kube_version)
pulumi.export("hooks", sorted(chart.hooks))
