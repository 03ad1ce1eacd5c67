#!/bin/sh
# Puts LLaMA-Factory's source at the pinned commit in testdata/ref/lf (not
# committed): from the fetched snapshot's git directory (LF_GIT, default
# /work/.mirror/hiyouga+LLaMA-Factory/repo). Exits 1 with a message when
# the snapshot or the commit is not there.
set -e
here=$(cd "$(dirname "$0")" && pwd)
commit=ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30
git_dir=${LF_GIT:-/work/.mirror/hiyouga+LLaMA-Factory/repo}
if ! git --git-dir="$git_dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
	echo "setup.sh: LLaMA-Factory $commit not found in $git_dir (fetch github:hiyouga/LLaMA-Factory, or set LF_GIT)" >&2
	exit 1
fi
rm -rf "$here/lf"
mkdir -p "$here/lf"
git --git-dir="$git_dir" archive "$commit" src/llamafactory/data tests/data | tar -x -C "$here/lf"
echo "LLaMA-Factory $commit in $here/lf"
