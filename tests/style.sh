#!/bin/bash
# The source's own rules, as TAP:
#   - rant.c's lines within 100 columns (tabs as 8), string literals excepted;
#   - no function declared before its definition (dependency order);
#   - the header's reading order is the order of the section markers;
#   - the measurement (emit, reflect) above the outputs (report, json, plot);
#   - nothing refers to files outside the repository, or to the seed;
#   - every link in README.md and docs/ resolves, file and #heading;
#   - the guest lab's own settings: a bad one is one line and exit 2,
#     before anything is built or booted.
cd "$(dirname "$0")/.." || exit 2
TAP_ONLY=1
# shellcheck source=tests/lib.sh
. tests/lib.sh

long=$(python3 - <<'PY'
import re
s = re.compile(r'"(\\.|[^"\\])*"')
for i, l in enumerate(open('rant.c'), 1):
    if len(s.sub('""', l.rstrip('\n').expandtabs(8))) > 100:
        print(i)
PY
)
expect_eq "rant.c: every line within 100 columns outside string literals" "$(echo "$long" | head -5 | tr "\n" " " | sed "s/ *$//")" ""

fwd=$(grep -nE '^static [^=;]*\)\s*;' rant.c | grep -v '__attribute__' | grep -vE '\(\*[a-z_]+\)')
expect_eq "rant.c: no forward declarations of functions" "$(echo "$fwd" | head -3 | tr "\n" " " | sed "s/ *$//")" ""

order=$(python3 - <<'PY'
import re
src = open('rant.c').read()
head = src[:src.index('*/')]
m = re.search(r'Reading order:(.*?)\n \*\n', head, re.S)
text = re.sub(r'\s*\n \*\s*', ' ', m.group(1)).lower() if m else ''
marks = re.findall(r'^/\* -+ ([a-z ,()&-]+) \*/$', src, re.M)
key = {'configuration, state': 'configuration', 'classes, sizes': 'classes and sizes'}
pos = []
for t in marks:
    p = text.find(key.get(t, t))
    if p < 0:
        print('not in the header: ' + t)
    pos.append(p)
if pos != sorted(pos):
    print('out of order: ' + ', '.join(marks))
PY
)
expect_eq "rant.c: the header's reading order names every section, in file order" "$order" ""

# Measurement above outputs: the loops reach the outputs through run.to alone.
halves=$(python3 - <<'PY'
import re
marks = re.findall(r'^/\* -+ ([a-z ,()&-]+) \*/$', open('rant.c').read(), re.M)
loops = [marks.index(t) for t in ('emit', 'reflect') if t in marks]
outs = [marks.index(t) for t in ('report', 'json', 'plot') if t in marks]
if len(loops) != 2 or len(outs) != 3 or max(loops) > min(outs):
    print('sections: ' + ', '.join(marks))
PY
)
expect_eq "rant.c: emit and reflect stand above report, json and plot" "$halves" ""

refs=$(git ls-files | grep -vE '^tests/(fuzz-regress|fuzz-corpus)/' |
	xargs grep -nIiE 'SPEC\.md|\.\./shared|the seed\b' 2>/dev/null | grep -v '^tests/style.sh:')
expect_eq "the project speaks of itself (no SPEC.md, shared/ or 'the seed')" "$(echo "$refs" | head -2 | tr "\n" " " | sed "s/ *$//")" ""

# every link between the documents names a file that exists and, after '#', one of its
# headings as GitHub makes anchors of them
links=$(python3 - <<'PY'
import os, re, subprocess
files = subprocess.run(['git', 'ls-files', '*.md'], capture_output=True, text=True).stdout.split()
def slugs(path):
    out, seen, fence = set(), {}, False
    for line in open(path):
        if line.startswith('```'):
            fence = not fence
        m = None if fence else re.match(r'#{1,6} (.*)', line)
        if m:
            s = re.sub(r'[^\w\- ]', '', m.group(1).strip().lower()).replace(' ', '-')
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else '%s-%d' % (s, n))
    return out
for f in files:
    text = re.sub(r'```.*?```', '', open(f).read(), flags=re.S)
    for t in re.findall(r'\]\(([^)\s]+)\)', text):
        if re.match(r'[a-z]+:', t):
            continue
        p, _, a = t.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(f), p)) if p else f
        if not os.path.exists(dest):
            print('%s: %s: no such file' % (f, t))
        elif a and (not dest.endswith('.md') or a not in slugs(dest)):
            print('%s: %s: no such heading' % (f, t))
PY
)
expect_eq "README.md and docs/: every internal link and #anchor resolves" "$(echo "$links" | head -3 | tr "\n" " " | sed "s/ *$//")" ""

for bad in VM_FIRST_S=abc VM_FIRST_S=0 VM_TIMEOUT=-5; do
	err=$(env "$bad" timeout 20 bash tests/vm/run.sh std 2>&1 >/dev/null)
	rc=$?
	expect_eq "the guest lab with $bad: exit 2, one line naming it" \
		"$rc $(echo "$err" | wc -l) $([[ $err == *"${bad%%=*}="* ]] && echo named)" "2 1 named"
done

finish
