package com.k8sconnect.examples;

import com.k8sconnect.k8sconnect.inputs.ClusterConnectionArgs;
import com.pulumi.Config;
import java.nio.file.Path;
import java.util.Optional;

/** Which cluster the example programs use. */
public final class Cluster {
    private Cluster() {}

    /**
     * The kubeconfig file named by config kubeconfigPath, else $KUBECONFIG,
     * else ~/.kube/config, and config context if set (else its
     * current-context).
     */
    public static ClusterConnectionArgs connection(Config config) {
        var path = config.get("kubeconfigPath")
            .or(() -> Optional.ofNullable(System.getenv("KUBECONFIG")))
            .orElse(Path.of(System.getProperty("user.home"), ".kube", "config").toString());
        var builder = ClusterConnectionArgs.builder().kubeconfigFile(path);
        config.get("context").filter(c -> !c.isEmpty()).ifPresent(builder::context);
        return builder.build();
    }
}
