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
 # No panic on any input: each as jinja2 renders or raises.
 ("{% for m in l|selectattr('content') %}{{ m.content }};{% endfor %}",{"l":[{"content":"a"},{"content":""},{"x":1}]}),
 ("{{ l|rejectattr('content')|list }}",{"l":[{"content":"a"},{"content":""},{"x":1}]}),
 ("{{ l|selectattr('content', 'equalto', 'a')|list }}",{"l":[{"content":"a"},{"content":""}]}),
 ("{{ n|select|list }}|{{ n|reject|list }}",{"n":[0,1,2,""]}),
 ("{{ 'x' * -1 }}|{{ -1 * 'x' }}|{{ 3 * 'ab' }}|{{ 'a' * true }}",{}),
 ("{{ s|indent(-1) }}|{{ s|indent(-2, true) }}|{{ s|indent(width=-1, first=true) }}",{"s":"a\nb"}),
 ("{{ range(100001)|length }}",{}),
 ("{{ range(100000)|length }}",{}),
 ("{{ n[0:10**18:2] }}|{{ n[-8::2] }}|{{ n[10**18:-10**18:-2] }}|{{ s[-100:2] }}|{{ s[::-2] }}|{{ t[-9::2] }}",{"n":[0,1,2,3,4],"s":"abcde","t":"\u00e9bcde"}),
 ("{{ 1/0 }}",{}), ("{{ 1.0/0 }}",{}), ("{{ 1//0 }}",{}), ("{{ 1.0//0 }}",{}), ("{{ 1%0 }}",{}), ("{{ 1.5%0 }}",{}),
 ("{{ -7//2 }} {{ -7%2 }} {{ 7%-2 }} {{ -7.5//2 }} {{ -7.5 % 2 }} {{ 7 % 2.5 }} {{ 6/3 }} {{ 2**-1 }} {{ 2**3 }}",{}),
 ("{{ 1.0 }} {{ 0.1 }} {{ 3.14 }} {{ x }} {{ [x, 2.5] }}|{% for v in f %}{{ v }} {% endfor %}|{{ f }}",{"x":1.0,"f":[123456789.5,1e20,1e-5,1e16,1e15,-0.0,2.5e-7]}),
 ("{{ '12'.isdigit() }}{{ s.isdigit() }}{{ ''.isdigit() }}",{"s":"abc"}),
 ("{{ n.index(1) }}|{{ n.index('b') }}",{"n":[0,1,"b"]}),
 ("{{ n.index(5) }}",{"n":[0,1]}),
 ("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",{}),
 ("{{ n }}|{{ None }}|{{ [n] }}|{{ n ~ 'a' }}|{{ n|string }}|{{ [n, 1]|join(',') }}",{"n":None}),
 ("{{ 3|round }}|{{ 2.5|round }}|{{ 3.5|round }}|{{ 2.567|round(2) }}|{{ x|round }}",{"x":7}),
 ("{% macro g(n) %}{{ f(n) }}{% endmacro %}{% macro f(n) %}{{ g(n) }}{% endmacro %}{{ f(1) }}",{}),
 ("{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{% else %}ok{% endif %}{% endmacro %}{{ f(150) }}",{}),
]
for src,ctx in cases:
  try: out={"text":e.from_string(src).render(**ctx)}
  except Exception as ex: out={"error":str(ex)}
  print(json.dumps({"src":src,"ctx":ctx, **out}))
