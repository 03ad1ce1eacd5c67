# strict.py: prints what Python jinja2 (transformers' sandboxed environment)
# gives for expressions where ardanlabs/jinja v1.8.0 as published was lenient
# or printed another repr; its output is testdata/strict.jsonl, which
# TestEngineRaisesAsJinja2 compares the patched engine with.
#   /usr/bin/python3 strict.py > ../strict.jsonl
import json
from jinja2.sandbox import ImmutableSandboxedEnvironment as E
e=E(trim_blocks=True,lstrip_blocks=True)
cases=[
 ("{{ (t.function).description }}",{"t":{"name":"x"}}),
 ("{{ t['function']['description'] }}",{"t":{"name":"x"}}),
 ('{{ "a" + x }}',{"x":[1]}),
 ('{{ "a" + x }}',{"x":1}),
 ("{{ [1] + x }}",{"x":"s"}),
 ("{{ 1 + x }}",{"x":"s"}),
 ("{{ 1 + x }}",{"x":None}),
 ("{{ 1 + x }}",{"x":True}),
 ('{{ "a" in x }}',{"x":None}),
 ("{{ 1 in x }}",{"x":"abc"}),
 ("{{ x }}",{"x":["it's", 'a"b', "q'\"", "t\tn\n\x01\u00e9\u200b\\"]}),
 ("{{ x }}",{"x":{"it's":1}}),
 ("{{ y.z }}",{}),
 ("{{ n.z }}|{{ n.z is defined }}",{"n":None}),
 ("{{ n.z.w }}",{"n":None}),
 ('{{ x["k"].w }}',{"x":{}}),
 ('{{ "a" + u }}',{}),
 ("{{ 1 in u }}",{}),
 ("{{ x.foo.bar }}",{"x":"s"}),
 ("{{ x.foo.bar }}",{"x":[1]}),
 ("{{ x.foo is defined }}{{ x.foo }}",{"x":{}}),
 ("{% if t.function %}{{ t.function.name }}{% endif %}",{"t":{"name":"x"}}),
 ("{% for k, v in p.items() %}{{ k }}={{ v }};{% endfor %}|{{ p['items'] }}|{{ p.get('keys') }}",{"p":{"items":"a list","keys":1}}),
 # chains of + (joined once, printed part by part: PATCHES.md)
 ("{{ '<' + r + '>' + c + '|' }}",{"r":"user","c":"hi\nthere"}),
 ("{% set s = '<' + r + '>' + c %}{{ s }}|{{ s | length }}",{"r":"user","c":"hi"}),
 ("{{ 1 + 2 + 3 }}|{{ [1] + [2] + [3] }}|{{ 'a' + ('b' + 'c') + 'd' }}",{}),
 ("{{ 'a' + 'b' + x + 'c' }}",{"x":1}),
 ("{{ 1 + 2 + x }}",{"x":"s"}),
 ("{{ 'a' + 'b' + u + 'c' }}",{}),
 ("{{ 'a' + 'b' + x + raise_it }}",{"x":[1]}),
 ("{% for m in x %}{{ loop.cycle('o', 'e') }}{{ loop.index }}{% endfor %}",{"x":[1,2,3]}),
]
for src,ctx in cases:
  try: out={"text":e.from_string(src).render(**ctx)}
  except Exception as ex: out={"error":str(ex)}
  print(json.dumps({"src":src,"ctx":ctx, **out}))
