#!/usr/bin/python3
"""Every reference to a section of docs/theory.md in the code, the tests and the docs resolves:
"docs/theory.md §3b" (and the further "§X" of the same list, "docs/theory.md §4, §7") must name a
heading of docs/theory.md ("## 3b. …"); it has no numbered subsections, so "§6.2" names nothing. References to the theory
notes outside the repository ("THEORY §6.3", "../shared/…") are refused: a reader of the repository
cannot follow them.
usage: section_references_test.py REPOSITORY"""
import os
import re
import sys

REPO = os.path.abspath(sys.argv[1])
SCAN = ["src", "include", "tests", "docs", "jobs", "README.md", ".ci"]
SKIP = {os.path.join("tests", "bench", "README.md")}  # the record of earlier runs quotes old notes verbatim
SUFFIXES = (".cpp", ".hpp", ".h", ".py", ".md", ".toml", ".txt", ".sh", ".cmake")

headings = set()
with open(os.path.join(REPO, "docs", "theory.md"), encoding="utf-8") as f:
    for line in f:
        m = re.match(r"^##\s+([0-9]+[a-z]?|T[0-9]+)[.\s]", line)
        if m:
            headings.add(m.group(1))

reference = re.compile(r"docs/theory\.md((?:[ ,;and]*§ ?[0-9A-Za-z.]+)+)")
label = re.compile(r"§ ?([0-9]+[a-z]?|T[0-9]+)((?:\.[0-9]+)?)")
outside = re.compile(r"THEORY(?:\.md)? ?§|\.\./shared/")

failures = []
files = 0
for entry in SCAN:
    root = os.path.join(REPO, entry)
    paths = [root] if os.path.isfile(root) else [os.path.join(d, n) for d, _, ns in os.walk(root) for n in ns]
    for path in paths:
        rel = os.path.relpath(path, REPO)
        if rel in SKIP or not path.endswith(SUFFIXES) or rel == os.path.join("tests", "docs", "section_references_test.py"):
            continue
        files += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                for m in reference.finditer(line):
                    for item in label.finditer(m.group(1)):
                        if item.group(1) not in headings or item.group(2):
                            failures.append(f"{rel}:{number}: docs/theory.md §{item.group(1)} is not a section "
                                            f"(sections: {', '.join(sorted(headings))})")
                if outside.search(line):
                    failures.append(f"{rel}:{number}: a reference outside the repository: {line.strip()[:100]}")

for f in failures:
    print(f)
print(f"{files} files, {len(failures)} unresolved reference(s)")
sys.exit(1 if failures else 0)
