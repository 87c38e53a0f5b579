"""k8sconnect quickstart: one ConfigMap, applied with Server-Side Apply."""

import json
import os

import pulumi
import pulumi_k8sconnect as k8sconnect

config = pulumi.Config()

# Which cluster: a kubeconfig file (config kubeconfigPath, else $KUBECONFIG,
# else ~/.kube/config) and optionally one of its contexts.
kubeconfig_path = (
    config.get("kubeconfigPath")
    or os.environ.get("KUBECONFIG")
    or os.path.expanduser("~/.kube/config")
)
with open(kubeconfig_path, encoding="utf-8") as f:
    kubeconfig = f.read()

namespace = config.get("namespace") or "default"
name = config.get("name") or "k8sconnect-quickstart"
message = config.get("message") or "hello from k8sconnect"

configmap = k8sconnect.KubernetesObject(
    "configmap",
    cluster_connection={
        "kubeconfig": pulumi.Output.secret(kubeconfig),
        "context": config.get("context"),
    },
    yaml_body=f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: {namespace}
data:
  message: {json.dumps(message)}
""",
)

pulumi.export(
    "object",
    pulumi.Output.concat(configmap.resource_ref.namespace, "/", configmap.resource_ref.name),
)
