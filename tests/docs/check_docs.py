#!/usr/bin/env python3
"""Checks the documentation against the tree (issue 31 item 9).

1. Every relative link and #anchor in README.md and docs/*.md resolves: the file exists, and the
   anchor is a heading of the target Markdown file (GitHub's heading ids).
2. The configuration reference cannot drift from the loader: every key the loader accepts (the
   known-key lists in gateway/config/*.cc, in whichever file they live) is documented in
   docs/CONFIGURATION.md, and every key documented there is one the loader accepts.
   config/examples/full-reference.yaml, which a unit test loads without errors, proves the key
   extraction still finds the loader's keys: a key it uses that the extraction misses fails the
   check, so a change in how the loader lists its keys cannot make this test pass vacuously.

Usage: check_docs.py [SOURCE_DIR]   (default: two levels above this file)
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), '..', '..'))
CONFIG_DOC = 'docs/CONFIGURATION.md'
failures = []


def fail(message):
    failures.append(message)


def read(path):
    with open(os.path.join(ROOT, path), encoding='utf-8') as f:
        return f.read()


# ---------------------------------------------------------------------------------------------
# Links and anchors

FENCE = re.compile(r'^\s*(```|~~~)')


def prose_lines(text):
    """The lines of a Markdown text outside fenced code blocks, with their line numbers."""
    in_code = False
    for number, line in enumerate(text.split('\n'), 1):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if not in_code:
            yield number, line


def slug(heading):
    """GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', heading)  # a link's text only
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


def anchors(text):
    seen = {}
    result = set()
    for _, line in prose_lines(text):
        m = re.match(r'^(#{1,6})\s+(.*?)\s*#*\s*$', line)
        if not m:
            continue
        base = slug(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f'{base}-{count}')
    return result


LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')


def strip_code_spans(line):
    return re.sub(r'`[^`]*`', '', line)


def check_links(doc):
    text = read(doc)
    own = anchors(text)
    for number, line in prose_lines(text):
        for target in LINK.findall(strip_code_spans(line)):
            if re.match(r'^[a-z][a-z0-9+.-]*:', target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition('#')
            where = f'{doc}:{number}: link {target!r}'
            if path:
                resolved = os.path.normpath(os.path.join(os.path.dirname(doc), path))
                if not os.path.exists(os.path.join(ROOT, resolved)):
                    fail(f'{where}: {resolved} does not exist')
                    continue
                if anchor:
                    if not resolved.endswith('.md'):
                        fail(f'{where}: an anchor into a file that is not Markdown')
                    elif anchor not in anchors(read(resolved)):
                        fail(f'{where}: {resolved} has no heading #{anchor}')
            elif anchor and anchor not in own:
                fail(f'{where}: no heading #{anchor} in this file')


# ---------------------------------------------------------------------------------------------
# Configuration keys

KEY = re.compile(r'^[a-z][a-z0-9_]*$')
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def balanced(text, start, open_char, close_char):
    """The text from text[start] (an opening bracket) to its matching closing bracket."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_char:
            depth += 1
        elif text[i] == close_char:
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return text[start:]


def key_literals(fragment):
    return {s for s in LITERAL.findall(fragment) if KEY.match(s)}


def strip_comments(source):
    source = re.sub(r'/\*.*?\*/', '', source, flags=re.S)
    return re.sub(r'//[^\n]*', '', source)


def loader_keys():
    """The key names the loader accepts, from every .cc and .h file under gateway/config/.

    The loader checks each mapping with ExpectMapping(node, path, known); `known` is an inline
    list, or a named list of string_views (possibly extended with insert), or built from a table
    of {"key", &Struct::member} rows. Every literal in those places is a key. Keys looked up as
    node["key"], or named in an error path Child(path, "key"), are keys too. Choice tables ({"drop", Enum::kDrop}) are values, not keys, and
    are not read."""
    keys = set()
    sources = []
    for directory, _, names in os.walk(os.path.join(ROOT, 'gateway', 'config')):
        sources += [os.path.join(directory, n) for n in names if n.endswith(('.cc', '.h'))]
    for path in sorted(sources):
        source = strip_comments(read(os.path.relpath(path, ROOT)))
        for m in re.finditer(r'\bExpectMapping\s*\(', source):
            keys |= key_literals(balanced(source, m.end() - 1, '(', ')'))
        # Named key lists: std::vector<std::string_view> xKeys = {...} / known / keys.
        for m in re.finditer(
                r'std::vector<std::string_view>\s*&?\s*\w*(?:[Kk]eys|known|all)\w*\s*(?:=\s*)?\{',
                source):
            keys |= key_literals(balanced(source, m.end() - 1, '{', '}'))
        for m in re.finditer(r'\b\w*(?:[Kk]eys|known|all)\w*\.insert\s*\(', source):
            keys |= key_literals(balanced(source, m.end() - 1, '(', ')'))
        # Tables of {"key", &Struct::member, ...} rows (and std::pair{"key", &...}).
        keys |= {k for k in re.findall(r'\{\s*"([a-z][a-z0-9_]*)"\s*,\s*&', source)}
        # Loops over literal lists of keys: for (... key : {"a", "b"}) node[key].
        for m in re.finditer(r'\bfor\s*\([^:;()]*:\s*\{', source):
            keys |= key_literals(balanced(source, m.end() - 1, '{', '}'))
        # Look-ups of a key in a YAML node, and the error paths the loader reports a key under.
        keys |= set(re.findall(r'\[\s*"([a-z][a-z0-9_]*)"\s*\]', source))
        keys |= set(re.findall(r'\bChild\s*\([^,()]*,\s*"([a-z][a-z0-9_]*)"\s*\)', source))
    return keys


def reference_yaml_keys():
    """The keys of config/examples/full-reference.yaml (its uncommented lines), skipping the
    names that are values, not keys: backend names, principal names under advance/acquire,
    replica names under peers."""
    name_maps = {'backends', 'advance', 'acquire', 'peers'}
    stack = []  # (indent, key)
    keys = set()
    for line in read('config/examples/full-reference.yaml').split('\n'):
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        m = re.match(r'^(\s*)(?:- )?([A-Za-z0-9_"*-]+):(?:\s|$)', line)
        if not m:
            continue
        indent = len(m.group(1)) + (2 if line.lstrip().startswith('- ') else 0)
        key = m.group(2).strip('"')
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else None
        if parent not in name_maps:
            keys.add(key)
        stack.append((indent, key))
    return keys


def documented_keys():
    """Keys documented in docs/CONFIGURATION.md: the first cell of a table row, a dotted path in
    backticks such as `limits.max_body_bytes` or `routes[].policy.advance`. The key is the last
    component."""
    paths = {}
    for number, line in prose_lines(read(CONFIG_DOC)):
        m = re.match(r'^\|\s*`([a-z_][a-z0-9_.\[\]<>-]*)`\s*\|', line)
        if m:
            paths[m.group(1)] = number
    keys = {}
    for path, number in paths.items():
        leaf = re.split(r'[.\]]', path)[-1]
        keys.setdefault(leaf, []).append(f'{path} (line {number})')
    return keys


def check_config_keys():
    loader = loader_keys()
    reference = reference_yaml_keys()
    missed = sorted(reference - loader)
    if missed:
        fail('the loader key extraction misses keys that config/examples/full-reference.yaml '
             'uses (and the loader accepts); teach loader_keys() where they are listed now: ' +
             ', '.join(missed))
    if len(loader) < 100:
        fail(f'only {len(loader)} loader keys found in gateway/config/: the extraction is broken')
    documented = documented_keys()
    for key in sorted(loader - set(documented)):
        fail(f'{CONFIG_DOC}: the loader accepts the key {key!r}, which is not documented '
             '(add a table row with its path, default and effect)')
    for key in sorted(set(documented) - loader):
        fail(f'{CONFIG_DOC}: documents {", ".join(documented[key])}, a key the loader does not '
             'accept')
    return len(loader), len(documented)


def main():
    docs = ['README.md'] + sorted('docs/' + n for n in os.listdir(os.path.join(ROOT, 'docs'))
                                  if n.endswith('.md'))
    for doc in docs:
        check_links(doc)
    loader, documented = check_config_keys()
    for message in failures:
        print('FAIL', message)
    print(f'{len(docs)} documents checked; {loader} loader keys, {documented} documented keys; '
          f'{len(failures)} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
