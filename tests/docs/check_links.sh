#!/usr/bin/env bash
# check_links.sh - every relative link of README.md and docs/*.md resolves inside
# the repository: the file or directory it names exists (and is not outside the
# tree), and a #fragment names a heading of the target Markdown file (GitHub's
# anchors: lower case, punctuation dropped, spaces as '-'). Links with a scheme
# (https:, mailto:) are not followed. No file may point outside the repository
# (../shared, /work/, an absolute path). Prints one line per broken link; exit 1
# if any.
#   bash tests/docs/check_links.sh [FILE.md...]   (default: README.md docs/*.md)
set -u -o pipefail
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || set -- README.md docs/*.md
exec python3 - "$@" <<'PY'
import os, re, sys
root = os.path.realpath('.')
fence = re.compile(r'^\s*(```|~~~)')
link = re.compile(r'(?<!\\)\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
def lines_outside_code(path):
    out, infence = [], False
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        if fence.match(line):
            infence = not infence
            continue
        if not infence:
            out.append((n, line))
    return out
def slug(h):
    h = re.sub(r'`', '', h.strip().lower())
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')
def anchors(path):
    seen, out = {}, set()
    for _, line in lines_outside_code(path):
        m = re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
        if not m:
            continue
        s = slug(m.group(1)); k = seen.get(s, 0); seen[s] = k + 1
        out.add(s if k == 0 else '%s-%d' % (s, k))
    return out
bad = 0
for md in sys.argv[1:]:
    for n, line in lines_outside_code(md):
        for target in link.findall(re.sub(r'`[^`]*`', '', line)):  # code spans hold no links
            if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                continue
            path, _, frag = target.partition('#')
            where = '%s:%d: %s' % (md, n, target)
            if path.startswith('/'):
                print(where + ': an absolute path'); bad += 1; continue
            full = os.path.realpath(os.path.join(os.path.dirname(md), path)) if path else os.path.realpath(md)
            if not (full == root or full.startswith(root + os.sep)):
                print(where + ': outside the repository'); bad += 1; continue
            if not os.path.exists(full):
                print(where + ': no such file'); bad += 1; continue
            if frag and full.endswith('.md') and frag.lower() not in anchors(full):
                print(where + ': no heading #' + frag); bad += 1
    for n, line in enumerate(open(md, encoding='utf-8'), 1):
        if re.search(r'\.\./shared|shared/DESIGN|/work/', line):
            print('%s:%d: refers to a path outside the repository' % (md, n)); bad += 1
sys.exit(1 if bad else 0)
PY
