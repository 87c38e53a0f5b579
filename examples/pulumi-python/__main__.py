"""The quickstart of examples/terraform/quickstart: a namespace and a ConfigMap
in it, applied with Server-Side Apply."""

import json
import os

import pulumi
import pulumi_k8sconnect as k8sconnect

# docs:begin object-quickstart
config = pulumi.Config()

# Which cluster: a kubeconfig file (config kubeconfigPath, else $KUBECONFIG,
# else ~/.kube/config) and optionally one of its contexts.
kubeconfig_path = (
    config.get("kubeconfigPath")
    or os.environ.get("KUBECONFIG")
    or os.path.expanduser("~/.kube/config")
)
# By path, never the content: the credentials stay out of the stack.
cluster = {
    "kubeconfig_file": kubeconfig_path,
    "context": config.get("context"),
}
namespace = config.get("namespace") or "k8sconnect-pulumi"
# Change it and run `pulumi up` again to see an in-place update.
greeting = config.get("greeting") or "hello"

ns = k8sconnect.KubernetesObject(
    "ns",
    cluster_connection=cluster,
    yaml_body=f"""apiVersion: v1
kind: Namespace
metadata:
  name: {namespace}
""",
)

config_map = k8sconnect.KubernetesObject(
    "configmap",
    cluster_connection=cluster,
    yaml_body=ns.resource_ref.name.apply(
        lambda ns_name: f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: greeting
  namespace: {ns_name}
data:
  greeting: {json.dumps(greeting)}
"""
    ),
)
# docs:end object-quickstart

# Where the ConfigMap lives.
pulumi.export(
    "configmap",
    pulumi.Output.concat(config_map.resource_ref.namespace, "/", config_map.resource_ref.name),
)
