#!/usr/bin/python3
"""exprs.py: the expression suite's goldens (../exprs.jsonl), from Python
jinja2 in transformers' environment (render.py's compile_template: tojson,
raise_exception, strftime_now, trim_blocks, lstrip_blocks, loopcontrols).

    TZ=UTC REF_NOW=2025-01-15T12:00:00Z python3 exprs.py > ../exprs.jsonl

In the spirit of minja's tests/test-syntax.cpp: each filter, test, method,
operator and literal form a chat template uses, with Python's semantics for
None, undefined, strings, lists, dicts, slicing, % and format. Each line is
{"src", "ctx", "text"} or {"src", "ctx", "error"}; TestExpressionsMatchJinja2
renders each with the engine (and, with -exprs.live, runs jinja2 again).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import render  # noqa: E402

L = {"l": [3, 1, 2], "s": "Hello World", "d": {"b": 2, "a": 1}, "n": None, "e": [], "t": True, "f": 1.5,
     "msgs": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo", "tool_calls": None}]}
cases = [
    # the six known causes of different texts
    ("{% for c in m.tool_calls %}x{% endfor %}", {"m": {"tool_calls": None}}),
    ("{{ n|length }}", L), ("{{ 3|length }}", {}),
    ("{{ u is iterable }}|{{ n is iterable }}|{{ 1 is iterable }}|{{ s is iterable }}|{{ d is iterable }}", L),
    ("{{ 'a ' 'b' }}|{{ ('x' 'y')|upper }}|{{ 'x' 'y' ~ 'z' }}", {}),
    ("{% set x = 'a' \"b\"\n 'c' %}{{ x }}|{{ {'k': 'v' 'w'} }}", {}),
    ("{{ 'a</think>b</think>c'.split('</think>', 1) }}|{{ 'a b  c '.split(None, 1) }}|{{ 'a,b,c'.split(',', 0) }}|{{ 'a,b,c'.split(',', -1) }}|{{ ' a  b '.split() }}", {}),
    ("{{ 'a,b,c'.rsplit(',', 1) }}|{{ ' a b c '.rsplit(None, 1) }}|{{ 'x'.split(sep='x') }}", {}),
    ("{{ x|map('tojson')|join(', ') }}", {"x": [1.0, {"b": 1, "a": "é"}, "s", None]}),
    ("{{ x|map('upper')|list }}|{{ x|map('replace', 'a', 'b')|list }}|{{ d|map('upper')|list }}", {"x": ["a", "ba"], "d": {"k": 1}}),
    ("{{ '%s'|format(x) }}|{{ '%s-%d'|format('a', 3) }}|{{ '%05.1f|%x|%r|%-4s|'|format(2.25, 255, 'q', 'ab') }}", {"x": [1, 2]}),
    ("{{ '%s and %s' % ('a', 'b') }}|{{ '%d%%' % 50 }}|{{ '%(k)s' % {'k': 'v'} }}|{{ '%.2f' % 1 }}|{{ '%5.1e' % 12345.678 }}|{{ '%g %g' % (0.0001, 1e20) }}", {}),
    ("{{ '%s %s' % ('a',) }}", {}), ("{{ '%s' % ('a', 'b') }}", {}), ("{{ '%d' % 'x' }}", {}),
    ("{{ 'x' ~ u ~ 'y' }}", {}),
    # filters
    ("{{ l|sort }}|{{ l|sort(reverse=true) }}|{{ l|first }}|{{ l|last }}|{{ l|min }}|{{ l|max }}|{{ l|sum }}|{{ l|reverse|list }}|{{ l|unique|list }}", L),
    ("{{ d|dictsort }}|{{ d|items|list }}|{{ d|list }}|{{ d|length }}", L),
    ("{{ s|lower }}|{{ s|upper }}|{{ s|title }}|{{ 'hello'|capitalize }}|{{ '  x  '|trim }}|{{ s|replace('o', '0') }}|{{ s|replace('o', '0', 1) }}", L),
    ("{{ s|length }}|{{ 'é'|length }}|{{ s|wordcount }}|{{ s|list|length }}", L),
    ("{{ 'a\nb\nc'|indent }}|{{ 'a\nb'|indent(2, true) }}|{{ 'a\n\nb'|indent(2) }}|{{ 'a\n\nb'|indent(2, blank=true) }}", {}),
    ("{{ x|default('d') }}|{{ n|default('d') }}|{{ n|default('d', true) }}|{{ ''|default('d', true) }}|{{ x|d('e') }}", L),
    ("{{ 3.7|int }}|{{ '42'|int }}|{{ 'x'|int }}|{{ '3.5'|float }}|{{ 2|float }}|{{ 1|string }}|{{ n|string }}|{{ -3|abs }}|{{ 2.675|round(2) }}|{{ 7.5|round(0, 'floor') }}", L),
    ("{{ l|join }}|{{ l|join('-') }}|{{ msgs|map(attribute='role')|join(',') }}|{{ msgs|map(attribute='x', default='z')|join(',') }}", L),
    ("{{ msgs|selectattr('role', 'equalto', 'user')|list|length }}|{{ msgs|rejectattr('role', 'equalto', 'user')|map(attribute='content')|first }}|{{ msgs|selectattr('tool_calls')|list }}|{{ msgs|selectattr('tool_calls', 'none')|list|length }}", L),
    ("{{ msgs|selectattr('tool_calls', 'defined')|list|length }}|{{ msgs|selectattr('tool_calls', 'undefined')|list|length }}", L),
    ("{{ l|select('odd')|list }}|{{ l|reject('odd')|list }}|{{ l|select('gt', 1)|list }}|{{ [0, 1, '', 'a', n]|select|list }}", L),
    ("{{ x|tojson }}|{{ x|tojson(indent=2) }}|{{ x|tojson(separators=(',', ':')) }}|{{ x|tojson(sort_keys=true) }}", {"x": {"z": [1, 2.0, None, True], "a": "<é>"}}),
    ("{{ l|batch(2)|list }}|{{ s|truncate(8) if false else '' }}{{ [1, 2, 3]|list|count }}", L),
    ("{{ '<a>&'|e }}|{{ '<a>'|escape }}|{{ '<b>'|safe }}", {}),
    # tests
    ("{{ n is none }}|{{ u is defined }}|{{ u is undefined }}|{{ 1 is number }}|{{ 1.0 is float }}|{{ 1 is integer }}|{{ t is boolean }}|{{ s is string }}|{{ d is mapping }}|{{ l is sequence }}|{{ s is sequence }}|{{ d is sequence }}", L),
    ("{{ 2 is even }}|{{ 3 is odd }}|{{ 1 is eq 1 }}|{{ 1 is equalto 2 }}|{{ 2 is gt 1 }}|{{ 'a' is in 'abc' }}|{{ 'A' is upper }}|{{ 'a' is lower }}|{{ t is true }}|{{ n is false }}|{{ f is callable }}", {"f": 1, "t": True, "n": None}),
    ("{{ 6 is divisibleby 3 }}", {}),
    # string methods
    ("{{ s.startswith('He') }}|{{ s.endswith('d') }}|{{ s.strip('Hd') }}|{{ '  x '.lstrip() }}|{{ '  x '.rstrip() }}|{{ 'xxaxx'.strip('x') }}|{{ s.upper() }}|{{ s.lower() }}|{{ s.title() }}|{{ 'ab'.capitalize() }}", L),
    ("{{ s.replace('l', 'L') }}|{{ s.replace('l', 'L', 2) }}|{{ s.count('l') }}|{{ s.find('o') }}|{{ 'éa'.find('a') }}|{{ s.find('z') }}", L),
    ("{{ '{} {}'.format('a', 'b') }}|{{ '{0}-{0}'.format('x') }}|{{ '{k}'.format(k=1) }}", {}),
    ("{{ '12'.isdigit() }}|{{ 'ab'.isalpha() }}|{{ 'a1'.isalnum() }}|{{ ' '.isspace() }}|{{ 'ab'.islower() }}|{{ 'AB'.isupper() }}", {}),
    ("{{ s.index('o') }}|{{ s.rfind('o') }}|{{ 'a-b'.partition('-') }}|{{ 'ab'.zfill(4) }}|{{ 'ab'.center(6, '*') }}|{{ 'ab'.ljust(4) }}|", L),
    # list and dict methods
    ("{{ d.get('a') }}|{{ d.get('z') }}|{{ d.get('z', 0) }}|{{ d.keys()|list }}|{{ d.values()|list }}|{{ d.items()|list }}", L),
    ("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}|{% for k in d %}{{ k }}{% endfor %}", L),
    ("{{ l.index(1) }}|{{ l.count(3) }}|{{ l[0] }}|{{ l[-1] }}|{{ l[5] }}|{{ l['x'] }}|{{ s[0] }}|{{ s[-1] }}|{{ s[100] }}", L),
    ("{{ s['text'] }}", L), ("{{ 'pre' + s['text'] }}", L), ("{{ l.x }}|{{ l.x is defined }}", L),
    # slicing
    ("{{ l[1:] }}|{{ l[:-1] }}|{{ l[::-1] }}|{{ l[::2] }}|{{ s[2:5] }}|{{ s[::-1] }}|{{ s[-3:] }}|{{ msgs[1:]|length }}|{{ l[5:] }}", L),
    # operators
    ("{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 7 / 2 }}|{{ 7 // 2 }}|{{ 7 % 3 }}|{{ 2 ** 10 }}|{{ -7 // 2 }}|{{ 1 - 0.5 }}|{{ 'ab' * 2 }}|{{ [1] + [2] }}|{{ 'a' ~ 1 ~ n }}", L),
    ("{{ 1 == 1.0 }}|{{ 'a' != 'b' }}|{{ 1 < 2 <= 2 }}|{{ not t }}|{{ t and 'x' }}|{{ n or 'y' }}|{{ 0 or [] }}|{{ 'a' in s }}|{{ 'H' in s }}|{{ 1 in l }}|{{ 'a' in d }}|{{ 'z' not in d }}", L),
    ("{{ 'a' if t else 'b' }}|{{ 'a' if n }}|{{ [1, 2] == [1, 2] }}|{{ {'a': 1} == {'a': 1} }}|{{ n == none }}|{{ u == none }}", L),
    ("{{ l < [4] }}", L), ("{{ 'a' < 1 }}", {}), ("{{ n < 1 }}", L), ("{{ n + 1 }}", L), ("{{ 's' - 1 }}", {}), ("{{ [1] * 2 }}", {}),
    # literals
    ("{{ 42 }}|{{ -1 }}|{{ 1.5 }}|{{ 1e3 }}|{{ 0.1 + 0.2 }}|{{ 'it''s' }}|{{ \"q\" }}|{{ '\\n'|length }}|{{ '\\t\\x41\\u00e9' }}|{{ true }}|{{ True }}|{{ false }}|{{ none }}|{{ None }}", {}),
    ("{{ [1, 'a', none, true, 1.0] }}|{{ (1, 2) }}|{{ {'a': [1, {'b': none}]} }}|{{ [] }}|{{ {} }}|{{ 1_000 }}", {}),
    ("{{ {'a': 1, 'b': 2}|tojson }}|{{ {'a': 1, 'a': 2} }}", {}),
    # statements and scoping
    ("{% set ns = namespace(x=0) %}{% for i in l %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}", L),
    ("{% set x = 0 %}{% for i in l %}{% set x = x + i %}{{ x }},{% endfor %}|{{ x }}", L),
    ("{% for i in l if i > 1 %}{{ loop.index }}:{{ i }}{% if not loop.last %},{% endif %}{% else %}none{% endfor %}|{% for i in e %}x{% else %}empty{% endfor %}", L),
    ("{% for i in l %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 2 %}{% break %}{% endif %}{{ i }}{% endfor %}", L),
    ("{% for i in l %}{{ loop.index0 }}{{ loop.revindex }}{{ loop.first }}{{ loop.length }}{{ loop.previtem }}{{ loop.nextitem }};{% endfor %}", L),
    ("{% macro m(a, b='d') %}[{{ a }}{{ b }}]{% endmacro %}{{ m(1) }}{{ m(1, 2) }}{{ m(a=3, b=4) }}", {}),
    ("{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}inner{% endcall %}", {}),
    ("{% set x %}block {{ 1 }}{% endset %}{{ x }}|{% filter upper %}up{% endfilter %}", {}),
    ("{%- if t -%}  a  {%- endif -%}  b  |  {% if t %}\n  c\n{% endif %}\nd", L),
    ("{{ raise_exception('boom') }}", {}),
    ("{{ strftime_now('%Y-%m-%d %d %B %Y %H:%M') }}", {}),
    ("{{ range(3)|list }}|{{ range(1, 7, 2)|list }}|{{ range(3, 0, -1)|list }}|{{ dict(a=1) }}|{{ namespace(a=1).a }}", {}),
    ("{% for a, b in [[1, 2], [3, 4]] %}{{ a }}{{ b }}{% endfor %}|{% for k, v in d|dictsort %}{{ k }}{% endfor %}", L),
    ("{{ messages[0]['content'] }}{{ messages[0].content }}{{ messages[-1]['role'] }}", {"messages": [{"role": "user", "content": "c"}]}),
    ("{% generation %}gen{% endgeneration %}", {}),
    ("{{ x.y.z }}", {"x": {"y": None}}), ("{{ x['a']['b'] }}", {"x": {}}), ("{{ u.attr }}", {}), ("{{ u[0] }}", {}),
    ("{{ u }}|{{ u|string }}|{{ u|list }}|{{ u|length }}|{{ u|default(1) }}|{{ u|join }}", {}),
    ("{% for i in u %}x{% endfor %}|{{ u|tojson }}", {}),
    ("{{ 1 + x }}", {"x": "s"}),
    # *args in a call, precedence and Python's TypeErrors (found by the differential fuzzer)
    ("{% macro m(a, b) %}{{ a }}-{{ b }}{% endmacro %}{{ m(*x) }}|{{ m(1, *[2]) }}", {"x": ["p", "q"]}),
    ("{{ 0.5 + 1 ~ 2 }}", {}), ("{{ 'a' ~ 1 + 2 }}", {}), ("{{ none == u is string }}|{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}", {}),
    ("{{ -x|abs }}|{{ -(x)|abs }}|{{ -x is number }}", {"x": 3}), ("{{ -x }}", {"x": "s"}), ("{{ x[1:] }}", {"x": None}),
    ("{{ 0 == false }}|{{ 1 == 1.0 }}|{{ [1] == (1,) }}|{{ (1,) }}|{{ () }}|{{ (1, 2) + (3,) }}", {}),
    ("{{ ['B', 'a', 'C']|sort }}|{{ ['B', 'a', 'C']|sort(case_sensitive=true) }}|{{ ['a', 'A', 1, 1.0, true]|unique|list }}|{{ ['B', 'a']|min }}|{{ ['B', 'a']|max }}", {}),
    ("{{ '{-x} (y) [z]'|title }}|{{ \"it's a-b\".title() }}|{{ 'one two,three'|wordcount }}", {}),
    ("{{ d['items'] is defined }}|{{ d['items']['type'] is defined }}|{{ '%s' % l }}|{{ 'x' % d }}", {"d": {"a": 1}, "l": [1, 2]}),
    ("{{ n|map('upper')|list }}|{{ n|selectattr('a')|list }}|{{ ''|select|list }}", {"n": None}),
    ("{{ 1|sum }}", {}), ("{{ n|join }}", {"n": None}), ("{{ n|dictsort }}", {"n": [1]}), ("{{ 3|indent }}", {}),
    ("{{ [1, 'a']|sort }}", {}), ("{{ x in {'a': 1} }}", {"x": [1]}), ("{{ 1 is integer 2 }}", {}),
    # found by the corpus of llama.cpp's templates (ByteDance Seed-OSS, DeepSeek-V3.2, llama.cpp's
    # DeepSeek-R1, Functionary v3.1, Ministral 3)
    ("{% if t %}{{ '{\"a\": 1}'|from_json }}{% endif %}", {"t": True}), ("{% if t %}{{ '[1]'|fromjson }}{% endif %}", {"t": True}),
    ("{{ x|sort(attribute='type')|map(attribute='type')|join(',') }}|{{ x|sort(attribute='type', reverse=true)|map(attribute='n')|join }}|{{ x|sort(attribute='n,type')|map(attribute='n')|join }}|{{ y|sort(attribute='a.b')|map(attribute='k')|join }}|{{ y|sort(attribute='z.0')|map(attribute='k')|join }}",
     {"x": [{"type": "text", "n": 2}, {"type": "image", "n": 1}, {"type": "Audio", "n": 3}], "y": [{"a": {"b": 2}, "k": "p", "z": [5]}, {"a": {"b": 1}, "k": "q", "z": [4]}]}),
    ("{{ x|sort(attribute='type', case_sensitive=true)|map(attribute='type')|join }}", {"x": [{"type": "b"}, {"type": "B"}, {"type": "a"}]}),
    ("{{ x|sort(attribute='missing') }}", {"x": [{"type": "b"}, {"type": "a"}]}),
    ("{% set d = {0: 'a', 512: 'b', 1: 'c', 'k': 'v'} %}{{ d }}|{{ d[0] }}{{ d[512] }}{{ d.get(1) }}{{ d.k }}|{{ d['0'] is defined }}|{{ 0 in d }}{{ '0' in d }}|{{ d|tojson }}|{{ d|list }}|{{ d.keys()|list }}|{{ d.items()|list }}|{% for k, v in d.items() %}{{ k is number }}{% endfor %}", {}),
    ("{% set d = {16384: 4, 0: 0, 512: 1} %}{% for k, v in d|dictsort %}{{ -1 <= k }}{{ k + 1 }}{{ v }};{% endfor %}|{{ {true: 1, 1: 2, 1.0: 3} }}|{{ {none: 1}[none] }}|{{ {1.5: 'x', -2: 'y'} }}|{{ {1: 'x'} == {1.0: 'x'} }}|{{ {(1, 2): 'x'}[(1, 2)] }}", {}),
    ("{{ l|map('string')|tojson }}", {"l": [1, 2]}), ("{{ l|map('string')|length }}", {"l": [1, 2]}),
    ("{{ l|reverse|tojson }}", {"l": [1, 2]}), ("{{ d.items()|tojson }}", {"d": {"a": 1}}), ("{{ l|select|tojson }}", {"l": [1, 2]}),
    ("{{ 'y' if e|select else 'n' }}|{{ 'y' if e|map('string') else 'n' }}|{{ 'y' if e|reverse else 'n' }}|{{ l|map('string') is sequence }}|{{ l|map('string') is iterable }}|{{ (l|map('string'))[0] is defined }}|{{ d.items()|length }}|{{ 'y' if d.items() else 'n' }}|{{ l|map('string')|list|tojson }}|{{ l|reverse|list }}",
     {"e": [], "l": [1, 2], "d": {"a": 1}}),
    ("{{ '<b>'|safe + '<i>' }}|{{ '<i>' + '<b>'|safe }}|{{ '<a>'|e + '&' }}|{{ '<b>'|safe ~ '<i>' }}|{{ ('<b>'|safe + '<i>')|length }}|{{ \"'\"|safe + s + \"'\"|safe + x|tojson }}|{{ ('x'|safe + '<') + '>' }}|{{ '<'|safe + '<'|safe }}|{{ '<b>'|e|e }}",
     {"s": "a&b", "x": {"q": "\"<'>"}}),
    ("{{ 'x'|safe + 1 }}", {}),
    ("{{ d|dictsort }}|{{ d|dictsort(true) }}|{{ d|dictsort(by='value') }}|{{ d|dictsort(reverse=true) }}|{{ d|dictsort(false, 'value', true) }}|{{ '\"<&>\\''|e }}", {"d": {"B": 1, "a": 2, "c": 0}}),
    ("{{ {1: 'a', 'b': 2}|dictsort }}", {}), ("{{ d|dictsort(by='x') }}", {"d": {"a": 1}}),
    # a str's or list's item named as a method is the method (jinja2's getitem falls back to getattr)
    ("{{ s['format'] is defined }}|{{ s['upper']() }}|{{ s['text'] is defined }}|{{ l['count'](1) }}|{{ l['append'] is defined }}|{{ l['pop'] is defined }}|{{ (1, 2)['count'](1) }}", {"s": "ab", "l": [1]}),
    ("{% for v in s['format'] %}{% endfor %}", {"s": "ab"}), ("{{ l['append'](2) }}", {"l": [1]}),
    ("{{ 5 // 0.1 }}|{{ -5 // 0.1 }}|{{ 7.5 // 2 }}|{{ -7.5 // 2 }}|{{ 1 // -0.3 }}|{{ 0.0 // 3 }}|{{ -0.0 // 3 }}|{{ 0 // -3.0 }}|{{ 5 % 0.1 }}", {}),
    ("{% set g = l|map('string') %}{{ g|join }}{{ g|join }}|{% set h = l|select %}{{ h|first }}{{ h|list }}|{% set k = l|select %}{% for x in k %}{{ x }}{% endfor %}{% for x in k %}{{ x }}{% endfor %}|{% set m = l|reverse %}{{ m|list }}{{ m|list }}|{% set v = d.items() %}{{ v|list }}{{ v|list }}|{% set q = l|select %}{{ q|default('x')|list }}{{ q|list }}",
     {"l": [1, 2, 3], "d": {"a": 1}}),
    ("{{ [n, n]|sort }}|{{ [{'a': 1}, {'a': 1}]|sort }}|{{ [[2], [1, 5]]|sort }}|{{ [n]|sort }}", {"n": None}), ("{{ [n, 1]|sort }}", {"n": None}), ("{{ [n, n]|min }}", {"n": None}),
    ("{{ 1 if y else u is defined in [x, 1.5] }}|{{ d[1, 2] }}|{{ l[0, 1] is defined }}|{{ {(1, 2): 'p'}[1, 2] }}", {"y": 1, "x": 3, "d": {"a": 1}, "l": [1, 2]}),
    # the sandbox: mutating methods are unsafe (ImmutableSandboxedEnvironment)
    ("{{ s[:n] }}|{{ l[n:n:n] }}|{{ [true, 0] <= [1] }}|{{ [1, 2] < [1.0, 3] }}", {"s": "abc", "l": [1, 2], "n": None}),
    ("{{ [s[5]]|map(attribute='role')|list }}", {"s": ""}),
    ("{% set _ = d.update({'a': 1}) %}{{ d }}", {"d": {}}), ("{{ l.append(1) }}", {"l": []}), ("{{ d['pop'] is defined }}|{{ l.pop is defined }}|{{ l.count(1) }}", {"d": {}, "l": [1]}),
    # Python's str case mappings and predicates (full mappings, final sigma, title case, non-decimal digits)
    ("{{ 'Straße ǆemal ΐ ﬁx'|upper }}|{{ 'Straße'.upper() }}|{{ 'İstanbul'|lower }}|{{ 'ΟΔΟΣ ΟΔΟΣ. ΣΑ Σ'|lower }}|{{ 'ΌΣΟΣ'.lower() }}", {}),
    ("{{ 'hELLO wORLD'.capitalize() }}|{{ 'ǆemal'|capitalize }}|{{ 'ßa'.capitalize() }}|{{ 'ǆ ß-ǈx'|title }}|{{ 'ǆ ßx ΣΑΣ'.title() }}|{{ 'aΣ'.capitalize() }}", {}),
    ("{{ '²'.isdigit() }}|{{ '①'.isdigit() }}|{{ 'ª'.islower() }}|{{ 'Ⅻ'.isupper() }}|{{ 'ʰa'.islower() }}|{{ 'ǅ'.isupper() }}|{{ '12' is lower }}|{{ 'ª' is lower }}|{{ ['A'] is upper }}|{{ 5 is lower }}", {}),

    # equality as Python's ==, inside lists, dicts, tests and unique (numbers across kinds, tuples apart)
    ("{{ 1 is eq 1.0 }}|{{ [1] == [1.0] }}|{{ [(1,2)] == [[1,2]] }}|{{ [1, 1.0, true]|unique|list }}|{{ {'a': 1} == {'a': true} }}|{{ 1 is ne 1.0 }}|{{ [1.0] is equalto [1] }}|{{ 1.0 in [1] }}|{{ [1] in [[1.0]] }}|{{ [(1, 2)] != [[1, 2]] }}|{{ {'k': (1,)} == {'k': [1]} }}", {}),
    ("{{ 1.0 is sameas true }}|{{ 1 is sameas true }}|{{ n is sameas none }}|{{ t is sameas true }}|{{ 0 is sameas false }}|{{ 1.0 == true }}", {"n": None, "t": True}),
    ("{{ x == y }}|{{ x[0] == 1 }}|{{ [x] == [y] }}|{{ (x|list).index(1.0) }}|{{ x.count(true) }}", {"x": [1, 2.0], "y": [1.0, 2]}),

    # integers: underscores in literals; beyond 64 bits Python is exact and the engine refuses by name
    ("{{ 1_000 + 2 }}|{{ 1_0.5 }}|{{ 2 ** 62 }}|{{ 3 ** 39 }}|{{ -2 ** 63 }}|{{ 9223372036854775807 - 1 }}|{{ true + true }}|{{ 3 * false }}", {}),
    ("{{ 2 ** 64 }}", {}), ("{{ 9223372036854775807 + 1 }}", {}), ("{{ 99999999999999999999 }}", {}), ("{{ x * x }}", {"x": 4294967296}),

    # review of the above: an int against a float exactly, the int64 bounds, the int/float/round filters as
    # jinja2's, range of big steps, case-insensitive keys by str.lower, startswith of a tuple, more str methods
    ("{{ 9007199254740993 == 9007199254740992.0 }}|{{ 9007199254740993 > 9007199254740992.0 }}|{{ 9007199254740993 in [9007199254740992.0] }}|{{ [9007199254740993, 9007199254740992.0]|unique|list }}|{{ [9007199254740992.0, 9007199254740993]|max }}|{{ [9007199254740993, 9007199254740992.0]|sort }}|{{ [9007199254740993] < [9007199254740992.0] }}", {}),
    ("{{ 9007199254740993 is gt 9007199254740992.0 }}|{{ '10' is lt '9' }}|{{ 'b' is ge 'a' }}|{{ 2 is le 2.0 }}", {}), ("{{ 1 is gt 'a' }}", {}),
    ("{{ -x }}", {"x": -9223372036854775808}), ("{{ (-9223372036854775807 - 1) // -1 }}", {}), ("{{ x|abs }}", {"x": -9223372036854775808}),
    ("{{ (-1) ** 9223372036854775807 }}|{{ (-1) ** 4 }}|{{ 0 ** 0 }}|{{ 0 ** 5 }}|{{ 1 ** 99 }}|{{ (-9223372036854775807 - 1) % -1 }}", {}),
    ("{{ '1_000'|int }}|{{ 'x'|int(5) }}|{{ 'ff'|int(0, 16) }}|{{ '0xff'|int(0, 0) }}|{{ '077'|int(0, 8) }}|{{ '10'|int(base=2) }}|{{ '5 6'|int }}|{{ '5x'|int }}|{{ ' -5 '|int }}|{{ '٣'|int }}|{{ '1.5e2'|int }}|{{ 'inf'|int }}|{{ 'nan'|int }}|{{ {}|int(4) }}|{{ none|int }}|{{ '9223372036854775807'|int }}", {}),
    ("{{ '99999999999999999999'|int }}", {}), ("{{ 1e19|int }}", {}), ("{{ 1e400|int }}", {}),
    ("{{ 'x'|float(1.5) }}|{{ '1e400'|float }}|{{ '٣.5'|float }}|{{ '0x10'|float }}|{{ '1_0.5'|float }}|{{ ' 2.5 '|float }}|{{ none|float(2) }}", {}),
    ("{{ 5|round(0, 'floor') }}|{{ 5|round(1, 'ceil') }}|{{ 250|round(-2) }}|{{ 350|round(-2) }}|{{ -250|round(-2) }}|{{ 25|round(-1) }}|{{ 5|round(-5) }}|{{ 1234567890123456789|round(-2) }}|{{ true|round }}", {}),
    ("{{ range(0, 9223372036854775807, 4611686018427387904)|list }}|{{ range(5, -9223372036854775807, -4611686018427387904)|list }}", {}), ("{{ range(2.0)|list }}", {}), ("{{ range(0, 3, 0)|list }}", {}),
    ("{{ ['İ', 'i', 'j']|sort }}|{{ {'İ': 1, 'i': 2}|dictsort }}", {}),
    ("{{ 'x'.startswith(('a', 'x')) }}|{{ 'x'.endswith(('x',)) }}|{{ 'ab'.startswith(()) }}", {}), ("{{ 'x'.startswith(['x']) }}", {}), ("{{ 'None'.endswith(none) }}", {}),
    ("{{ 'aBß ΣΑΣ ǅ'.swapcase() }}|{{ ''.isascii() }}|{{ 'é'.isascii() }}|{{ '٣'.isdecimal() }}|{{ '²'.isdecimal() }}|{{ 'pre_x'.removeprefix('pre_') }}|{{ 'x.py'.removesuffix('.py') }}|{{ s.casefold is defined }}|{{ s.join is defined }}", {"s": "x"}),
    ("{{ ', '.join(['a']) }}", {}), ("{{ 'x'.removeprefix(1) }}", {}),
    ("{{ 9007199254740995 / 3 }}|{{ 9223372036854775807 / 3 }}|{{ -9007199254740995 / 3 }}|{{ 7 / 2 }}|{{ 9007199254740993 is divisibleby 3 }}", {}),
    ("{{ x|string }}|{{ [x]|string }}", {"x": 1700000000000}),
    # jinja2's integer literals (0x, 0o, 0b; no leading 0) and x.0 as x[0]
    ("{{ 0x1F }}|{{ 0o17 }}|{{ 0b1_01 }}|{{ 0x_ff + 1 }}|{{ 00 }}|{{ 0_0 }}|{{ 012.5 }}|{{ 0e1 }}|{{ 0X10 }}", {}), ("{{ 012 }}", {}), ("{{ 0x8000000000000000 }}", {}),
    ("{{ x.0 }}|{{ d.0 }}|{{ {0: 'i'}.0 }}|{{ (1, 2).1 }}|{{ 'abc'.1 }}|{{ x.5 is defined }}", {"x": ["a"], "d": {"0": "s"}}),
    ("{{ x.1.0 }}|{{ x.1.1.k }}|{{ x.1.0|upper }}", {"x": ["a", ["b", {"k": "v"}]]}),
    # loop.changed (Python's == of the values) and loop.depth
    ("{% for x in [1, 1.0, true, 2, 2.0] %}{{ loop.changed(x) }},{% endfor %}|{% for x in [[1], [1.0], (1,)] %}{{ loop.changed(x) }},{% endfor %}|{% for m in msgs %}{% if loop.changed(m.role) %}[{{ m.role }}]{% endif %}{% endfor %}", L),
    ("{% for x in [1] %}{% for y in [2] %}{{ loop.depth }}{{ loop.depth0 }}{% endfor %}{{ loop.depth }}{% endfor %}", {}),
    ("{% if false %}{{ x is == 1 }}{% endif %}ok", {}), ("{{ [1, 2]|select('==', 1)|list }}|{{ [1, 2]|reject('>', 1)|list }}", {}),
    ("{{ '%c' % 1114112 }}", {}), ("{{ '%c' % -1 }}", {}), ("{{ '%c' % 1114111 }}|{{ '%c' % 65 }}|{{ '%c'|format(233) }}", {}),
    ("{{ [(1, 2), (1.0, 2), (true, 2)]|unique|list }}|{{ [(1, 'A'), (1, 'a')]|unique|list }}", {}), ("{{ [(1, [2])]|unique|list }}", {}),
    ("{{ {4611686018427387904: 'a'}[4611686018427387904.0] }}|{{ {4611686018427387904.0: 'a', 4611686018427387904: 'b'} }}", {}),
    ("{{ 2.5|round(none) }}|{{ 3.5|round(none) }}|{{ -2.5|round(precision=none) }}|{{ 7|round(none) }}|{{ 2.5|round(1.0, 'floor') }}", {}), ("{{ 2.5|round(1.0) }}", {}),

    # filters and tests take jinja2's arguments only (Python's TypeError for others)
    ("{{ 'abc'|upper(1) }}", {}), ("{{ x|length(2) }}", {"x": [1]}), ("{{ 'a'|trim(1, 2) }}", {}), ("{{ l|join(',', 'x', 'y') }}", L),
    ("{{ x is defined(1) }}", {}), ("{{ l|sort(foo=1) }}", L), ("{{ 'a'|replace('b') }}", {}), ("{{ 2 is gt }}", {}), ("{{ l|select('odd', 1)|list }}", L),
    ("{{ l|join(',', d='-') }}", L), ("{{ l|batch }}", L), ("{{ l|map('upper', 1)|list }}", {"l": ["a"]}), ("{{ 1 is sameas }}", {}), ("{{ l|first(1) }}", L),
    ("{{ 'ab'|replace(old='a', new='x') }}|{{ x|default(default_value='z') }}|{{ '  xa'|trim(chars=' a') }}|{{ [{'a': 'q'}]|join(', ', 'a') }}|{{ l|batch(linecount=2)|list }}|{{ x|default(boolean=true) }}|{{ 'ab'|replace('a', new='y') }}", L),
    ("{{ l|batch(2, 0)|list }}", L),

    # range is Python's range: prints as range(0, 3), a slice is a range, never equals a list, json.dumps refuses it
    ("{{ range(3) }}|{{ range(1, 7, 2) }}|{{ range(3)|string }}|{{ [range(2)] }}|{{ range(10)[2:5] }}|{{ range(0, 10, 3)[::-1] }}|{{ range(10)[::2]|list }}|{{ range(5)[-2:] }}|{{ range(3)[1] }}|{{ range(3)|length }}|{{ range(3)|last }}|{{ range(3) is sequence }}|{{ 'y' if range(0) else 'n' }}",
     {}),
    ("{{ range(3) == [0, 1, 2] }}|{{ range(3) == range(3) }}|{{ range(0) == range(2, 2) }}|{{ range(3) != [0, 1, 2] }}|{{ [range(2)] == [[0, 1]] }}|{{ range(3)|list == [0, 1, 2] }}|{{ 1 in range(3) }}|{{ '%s' % range(2) }}|{{ range(3)|join(',') }}|{{ range(3)|sort }}|{{ range(2)|list }}",
     {}),
    ("{% set r = range(3) %}{% for i in r %}{{ i }}{% endfor %}{% for i in r %}{{ i }}{% endfor %}{% for i in r[1:] %}{{ i }}{% endfor %}", {}),
    ("{{ range(3)|tojson }}", {}), ("{{ [range(2)]|tojson }}", {}), ("{{ range(3) + [1] }}", {}), ("{{ range(3) * 2 }}", {}), ("{{ range(3) < range(4) }}", {}),
    ("{{ range(3)|reverse }}", {}),

    # a for loop and `in` pull a generator lazily, as Python's: a loop left by break leaves the rest
    ("{% set g = l|map('string') %}{% for x in g %}{{ x }}{% if x == '2' %}{% break %}{% endif %}{% endfor %}|{{ g|list }}", {"l": [1, 2, 3, 4]}),
    ("{% set g = l|select %}{% for x in g if x > 1 %}{{ x }}{% break %}{% endfor %}|{{ g|list }}", {"l": [1, 2, 3, 4]}),
    ("{% set g = l|select %}{% for x in g %}{{ x }}{{ loop.last }}{% break %}{% endfor %}|{{ g|list }}|{% set h = l|select %}{% for x in h if x is even %}{{ loop.nextitem }}{% break %}{% endfor %}|{{ h|list }}", {"l": [1, 2, 3, 4, 5]}),
    ("{% set g = l|select %}{% for x in g %}{{ loop.length }}{% break %}{% endfor %}|{{ g|list }}|{% set h = l|reverse %}{% for x in h %}{{ x }}{% if loop.index == 2 %}{% break %}{% endif %}{% endfor %}|{{ h|list }}", {"l": [1, 2, 3, 4]}),
    ("{% set g = l|select %}{{ 2 in g }}|{{ g|list }}|{% set h = l|select %}{{ 9 in h }}|{{ h|list }}|{% set k = l|select %}{{ 3 not in k }}|{{ k|list }}", {"l": [1, 2, 3, 4]}),
    ("{% set g = l|select %}{% for x in g %}{{ x }}{% break %}{% endfor %}{% for x in g %}{{ x }}{% endfor %}|{% set r = range(3) %}{% for x in r %}{% break %}{% endfor %}{{ r|list }}", {"l": [1, 2, 3]}),
    ("{% set g = l|select %}{% for x in g %}{{ x }}{{ g|first }}{% endfor %}", {"l": [1, 2, 3, 4]}),

    # a Markup kept in a variable stays one (markupsafe's + escapes the str operand; ~ and join are plain)
    ("{% set m = '<b>'|safe %}{{ m + '<i>' }}|{{ '<i>' + m }}|{{ m ~ '<i>' }}|{{ [m, '<i>']|join }}|{{ m + m }}|{% set e = '<a>'|e %}{{ e + '&' }}|{{ (m + '<')|length }}|{{ m|upper + '<' }}|{{ m * 2 + '<' }}|{{ m[1:] + '<' }}|{{ m[0] + '>' }}|{{ m.upper() + '<' }}|{{ m|e + '\"' }}",
     {}),
    ("{% set m = x|tojson|safe %}{{ m }}|{{ m + \"'\" }}|{{ [m] }}|{{ m|string + '<' }}|{{ m|replace('b', 'c') + '<' }}|{{ m|first + '<' }}|{{ m.split('b')[0] + '<' }}|{{ m == '\"<b>\"' }}|{{ m is string }}|{{ '%s<' % m }}|{{ (m ~ '<') + '<' }}",
     {"x": "<b>"}),
    ("{% macro f(a) %}{{ a + '&' }}{% endmacro %}{{ f('<'|safe) }}|{% set l = ['<b>'|safe] %}{{ l[0] + '<' }}|{% set m = 'a%sb'|safe %}{{ m % 'x' }}|{{ m|format(1) }}|{{ m.replace('a', 'y') + '<' }}|{{ ('<'|safe).strip() + '<' }}|{% set n = none|safe %}{{ n + '<' }}",
     {}),
    ("{% set m = '%s'|safe %}{{ m % '<' }}", {}), ("{% set m = '%s'|safe %}{{ m|format('<') }}", {}), ("{% set m = 'a'|safe %}{{ m.replace('a', '<') }}", {}), ("{% set m = '%r'|safe %}{{ m % '<' }}", {}),
    ("{% set m = 'ab'|safe %}{{ [m]|map('upper')|first + '<' }}|{{ m|trim + '<' }}", {}),

    # a generator, an iterator or a dict view has no list methods; a range has count and index
    ("{{ d.keys().count('a') }}", {"d": {"a": 1}}), ("{{ (l|select).index(1) }}", {"l": [1]}),
    ("{{ d.items().count is defined }}|{{ (l|reverse).pop is defined }}|{{ range(3).count(1) }}|{{ range(3).index(2) }}|{{ range(3).append is defined }}", {"d": {"a": 1}, "l": [1]}),

]
for src, ctx in cases:
    try:
        out = {"text": render.compile_template(src).render(**ctx)}
    except Exception as ex:
        out = {"error": str(ex), "type": type(ex).__name__}
    print(json.dumps({"src": src, "ctx": ctx, **out}, ensure_ascii=False))
