#!/usr/bin/env python3
"""A small FileCheck: checks that OUTPUT matches the `// PREFIX:` and
`// PREFIX-NEXT:` lines of SOURCE, in order (substring match; `{{re}}` parts
are regular expressions; `PREFIX{LITERAL}:` takes the text literally).

usage: filecheck.py SOURCE PREFIX OUTPUT
Exits 1 and names the first check not found."""
import re
import sys


def pattern(text, literal):
    if literal:
        return re.compile(re.escape(text))
    out, pos = "", 0
    for m in re.finditer(r"\{\{(.*?)\}\}", text):
        out += re.escape(text[pos:m.start()]) + m.group(1)
        pos = m.end()
    return re.compile(out + re.escape(text[pos:]))


def main():
    src, prefix, outp = sys.argv[1:4]
    checks = []
    rx = re.compile(r"//\s*" + re.escape(prefix) + r"(-NEXT)?(\{LITERAL\})?:(.*)$")
    for n, line in enumerate(open(src, encoding="utf-8"), 1):
        m = rx.search(line)
        if m:
            checks.append((n, bool(m.group(1)), pattern(m.group(3).strip(), bool(m.group(2)))))
    lines = open(outp, encoding="utf-8", errors="replace").read().split("\n")
    pos = 0  # next output line to search from
    for n, is_next, pat in checks:
        if is_next:
            if pos < len(lines) and pat.search(lines[pos]):
                pos += 1
                continue
            got = lines[pos] if pos < len(lines) else "<end of output>"
            print(f"{src}:{n}: {prefix}-NEXT: expected '{pat.pattern}' on the next line, got '{got}'")
            return 1
        while pos < len(lines) and not pat.search(lines[pos]):
            pos += 1
        if pos == len(lines):
            print(f"{src}:{n}: {prefix}: '{pat.pattern}' not found in the output")
            return 1
        pos += 1
    print(f"filecheck: {len(checks)} {prefix} lines matched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
