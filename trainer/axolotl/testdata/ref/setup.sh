#!/bin/sh
# Puts axolotl's chat_template prompt strategy at the pinned commit in
# testdata/ref/ax (not committed): from the fetched snapshot's git directory
# (AX_GIT, default /work/.mirror/axolotl-ai-cloud+axolotl/repo). Exits 1
# with a message when the snapshot or the commit is not there.
set -e
here=$(cd "$(dirname "$0")" && pwd)
commit=067b021c8
git_dir=${AX_GIT:-/work/.mirror/axolotl-ai-cloud+axolotl/repo}
if ! git --git-dir="$git_dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
	echo "setup.sh: axolotl $commit not found in $git_dir (fetch github:axolotl-ai-cloud/axolotl, or set AX_GIT)" >&2
	exit 1
fi
rm -rf "$here/ax"
mkdir -p "$here/ax"
git --git-dir="$git_dir" archive "$commit" src/axolotl/prompt_strategies/chat_template.py \
	src/axolotl/prompt_strategies/jinja_template_analyzer.py src/axolotl/utils/dict.py | tar -x -C "$here/ax"
echo "axolotl $commit in $here/ax"
