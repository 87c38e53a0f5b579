package main

import "os"

// quietUnlessAsked turns off the plugin SDK's and the provider's logs when
// nothing would show them.
//
// A plugin writes every log line, TRACE included, to its stderr, and
// Terraform or OpenTofu filters them by TF_LOG, TF_LOG_PROVIDER and
// TF_LOG_PATH, which the plugin inherits. Left at their defaults, the SDK's
// loggers format a JSON line for every framework step of every request, only
// for the engine to drop it: about an eighth of the provider's CPU time in a
// create of 200 objects (make bench PROFILE=1). When the user set none of
// these variables, nothing is asked for, and nothing is lost by not writing it.
func quietUnlessAsked() {
	for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PROVIDER_K8SCONNECT", "TF_LOG_SDK",
		"TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_ACC_LOG_PATH", "TF_LOG_PATH_MASK"} {
		if os.Getenv(v) != "" {
			return
		}
	}
	for _, v := range []string{"TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
		_ = os.Setenv(v, "OFF")
	}
}
