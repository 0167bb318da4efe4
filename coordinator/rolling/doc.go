// Package rolling holds the rolling upgrade test: a three-member cluster
// and a rack agent built from the last release commit of this repository
// (oldCommit, built from the repository's own history with git worktree),
// under write load, upgraded one member at a time to the current tree,
// one member downgraded once, with every step checked: all members agree
// (state hashes at the same index where both binaries hash; the same
// hosts everywhere) and no acknowledged write is lost.
//
// It runs in make test (a few minutes at most); it skips, saying why, when
// the history is shallow or lacks the commit, and fails under CI=true
// when the commit is there but does not build.
package rolling
