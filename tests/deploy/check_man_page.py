#!/usr/bin/env python3
"""The manual page documents every option the binary has, and formats without warnings.

Usage: check_man_page.py FENCEGATE_BINARY MAN_PAGE

Every option in `fencegate --help` (UsageText of gateway/config/command_line.cc), in
`fencegate store --help` and in `fencegate lock --help` must appear in the page (roff writes '-' as '\\-'); the page must lint
clean with mandoc -Tlint, or, without mandoc, format with groff -ww without a warning.
"""
import re
import shutil
import subprocess
import sys

binary, page_path = sys.argv[1], sys.argv[2]
failures = []


def options_of(args):
    text = subprocess.run([binary] + args, check=True, capture_output=True, text=True).stdout
    # An option at the start of a help line, or after "Usage:"-style synopses: --name, -h.
    return set(re.findall(r'(?<![\w-])(--[a-z][a-z-]*|-h)\b', text))


with open(page_path, encoding='utf-8') as f:
    source = f.read()
# The text a reader sees: '\-' is '-', font changes (\fB, \fI, \fR, \fP) and \& are not text.
page = re.sub(r'\\f[BIRP]|\\&', '', source.replace('\\-', '-'))

gateway_options = options_of(['--help'])
store_options = options_of(['store', '--help'])
lock_options = options_of(['lock', '--help'])
if len(gateway_options) < 7:
    failures.append(f'only {sorted(gateway_options)} found in --help: the extraction is broken')
for option in sorted(gateway_options | store_options | lock_options):
    if not re.search(r'(?<![\w-])' + re.escape(option) + r'(?![\w-])', page):
        failures.append(f'{page_path}: option {option} of the binary is not documented')

for section in ('NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'SIGNALS', 'EXIT STATUS', 'FILES',
                'SEE ALSO'):
    if not re.search(r'^\.SH "?' + section + r'"?$', source, re.M):
        failures.append(f'{page_path}: no section {section}')

if shutil.which('mandoc'):
    lint = subprocess.run(['mandoc', '-Tlint', page_path], capture_output=True, text=True)
    if lint.returncode != 0 or lint.stdout or lint.stderr:
        failures.append('mandoc -Tlint:\n' + lint.stdout + lint.stderr)
elif shutil.which('groff'):
    formatted = subprocess.run(['groff', '-man', '-Tutf8', '-ww', '-z', page_path],
                               capture_output=True, text=True)
    if formatted.returncode != 0 or formatted.stderr:
        failures.append('groff -ww:\n' + formatted.stderr)
else:
    print('neither mandoc nor groff is installed: the page was not formatted')

for failure in failures:
    print('FAIL', failure)
print(f'{len(gateway_options | store_options)} options checked; {len(failures)} failures')
sys.exit(1 if failures else 0)
