package pulumiop

import (
	"context"
	"testing"
)

func TestApplyFollowsOnlyWhereMarked(t *testing.T) {
	ctx := context.Background()
	if ApplyFollows(ctx) {
		t.Error("an unmarked context: apply follows")
	}
	marked := WithApplyFollowing(ctx)
	child, cancel := context.WithCancel(marked)
	defer cancel()
	if !ApplyFollows(marked) || !ApplyFollows(child) {
		t.Error("a marked context, or its child: apply does not follow")
	}
}
