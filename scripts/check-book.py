#!/usr/bin/env python3
"""Checks the book's links: every relative link in docs/src resolves to a
file (and, with a #fragment, to a heading in it), and every page is in
SUMMARY.md. mdbook itself refuses a SUMMARY entry without its file; this
covers the links inside pages, which it does not check.

Run: python3 scripts/check-book.py
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "src")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def anchors(path):
    """The ids mdbook gives the headings of a page."""
    out = set()
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_code = not in_code
            if in_code or not line.startswith("#"):
                continue
            text = line.lstrip("#").strip().lower()
            text = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
            out.add(text)
    return out


def links(path):
    in_code = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                in_code = not in_code
            if in_code:
                continue
            for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                yield n, m.group(1)


def main():
    problems = []
    pages = []
    for dirpath, _, files in os.walk(ROOT):
        pages += [os.path.join(dirpath, f) for f in files if f.endswith(".md")]
    summary = os.path.join(ROOT, "SUMMARY.md")
    listed = {os.path.normpath(os.path.join(ROOT, t)) for _, t in links(summary)}
    for page in sorted(pages):
        rel = os.path.relpath(page, ROOT)
        if page != summary and os.path.normpath(page) not in listed:
            problems.append(f"{rel}: not in SUMMARY.md")
        for n, target in links(page):
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
            if not os.path.exists(dest):
                problems.append(f"{rel}:{n}: {target}: no such file")
            elif frag and dest.endswith(".md") and frag not in anchors(dest):
                problems.append(f"{rel}:{n}: {target}: no such heading")
    for p in problems:
        print(p)
    if problems:
        sys.exit(f"check-book: {len(problems)} broken link(s)")
    print(f"check-book: {len(pages)} pages, every link resolves")


if __name__ == "__main__":
    main()
