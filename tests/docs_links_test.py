#!/usr/bin/env python3
"""Fails when the documentation points at something the repository does not have.

In every Markdown file of the source tree:
- a relative link ([text](path#anchor), images included) must name a file or
  folder that exists, and an anchor a heading of the file it names;
- a path that starts with a top-level folder of the repository (`preload/...`,
  tests/e2e/...), backticked or not, must exist; so must a backticked path that
  starts with a subfolder of the file's own folder (`cuda/hook_rows.txt` in
  preload/README.md). A `*` in a path is a glob that must match something;
- no run is labelled by an internal work-period counter ("session 12"): a
  figure says its date and commit (docs/performance.md).
In every Markdown and source file, a document named by its file name
(`*.md`) must exist somewhere in the repository: documents outside it
cannot be read by whoever clones it.

Usage: docs_links_test.py [SOURCE_ROOT]   (default: the folder above this one)
"""
import fnmatch
import os
import re
import sys

SKIP_DIRS = {".git", "node_modules", "__pycache__", "out", "builddir", "corpus", "regressions"}
SOURCE_SUFFIXES = (".md", ".h", ".hpp", ".c", ".cc", ".cpp", ".cu", ".S", ".py", ".sh", ".js",
                   ".proto", ".txt", ".map", ".supp", ".build", ".html", ".css")

LINK = re.compile(r"!?\[[^\]]*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
MD_NAME = re.compile(r"(?<![\w.-])([A-Za-z0-9_][\w.-]*\.md)\b")
SESSION = re.compile(r"\b[Ss]ession \d+")
# Documents of other projects that a comment cites by their path there.
EXTERNAL_DOCUMENTS = {"locations.md"}  # CPython's Objects/locations.md (preload/stacks)


def skipped(name):
    return name in SKIP_DIRS or name.startswith("build") or (name.startswith(".") and name != ".ci")


def walk(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not skipped(d))
        for name in sorted(files):
            yield os.path.join(folder, name)


def strip_fences(text):
    """The text with fenced code blocks blanked (their lines kept, for line numbers)."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced else line)
    return out


def slug(heading):
    """The anchor GitHub gives a heading."""
    text = re.sub(r"`|\*\*|\[|\]\([^)]*\)", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, seen = set(), {}
        with open(path, encoding="utf-8") as f:
            for line in strip_fences(f.read()):
                m = re.match(r"#{1,6}\s+(.*)", line)
                if m:
                    base = slug(m.group(1))
                    n = seen.get(base, 0)
                    seen[base] = n + 1
                    found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def exists(candidate):
    """A path, a glob, or a file named by its stem (a test, a program: tests/e2e/cuda/cupti)."""
    if not candidate.endswith("/") and not os.path.exists(candidate) and "*" not in candidate:
        return exists(candidate + ".*") or exists(candidate + "_test.*")
    if "*" in candidate:
        folder, pattern = os.path.split(candidate.rstrip("/"))
        return os.path.isdir(folder) and any(fnmatch.fnmatch(n, pattern) for n in os.listdir(folder))
    return os.path.exists(candidate)


def path_tokens(text, pattern):
    for m in pattern.finditer(text):
        token = m.group(0).rstrip(".,;:)'\"")
        if not any(c in token for c in "<>{}%$") and "//" not in token:
            yield token


def check_markdown(root, path, top_folders, md_names, problems):
    rel = os.path.relpath(path, root)
    here = os.path.dirname(path)
    with open(path, encoding="utf-8") as f:
        lines = strip_fences(f.read())
    subfolders = [d for d in os.listdir(here) if os.path.isdir(os.path.join(here, d)) and not skipped(d)]
    from_root = re.compile(r"(?<![\w./~-])(?:%s)/[\w.*/+-]*" % "|".join(map(re.escape, top_folders)))
    from_here = re.compile(r"^(?:%s)/[\w.*/+-]*$" % "|".join(map(re.escape, subfolders))) if subfolders else None

    for number, line in enumerate(lines, 1):
        where = f"{rel}:{number}"
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            target_path = os.path.normpath(os.path.join(here, file_part)) if file_part else path
            if not os.path.exists(target_path):
                problems.append(f"{where}: link to {target}: no such file")
            elif not os.path.realpath(target_path).startswith(os.path.realpath(root)):
                problems.append(f"{where}: link to {target}: outside the repository")
            elif anchor and target_path.endswith(".md") and anchor not in anchors(target_path):
                problems.append(f"{where}: link to {target}: no heading with that anchor")
        for token in path_tokens(line, from_root):
            if not exists(os.path.join(root, token)):
                problems.append(f"{where}: {token}: no such path in the repository")
        if from_here:
            for span in CODE_SPAN.findall(line):
                span = span.strip().rstrip(".,;:")
                if from_here.match(span) and not any(c in span for c in "<>{}%$"):
                    if not exists(os.path.join(here, span)) and not exists(os.path.join(root, span)):
                        problems.append(f"{where}: {span}: no such path in {os.path.relpath(here, root)}/")
        for m in SESSION.finditer(line):
            problems.append(f"{where}: \"{m.group(0)}\": say the date and commit of a run instead")


def check_md_names(root, path, md_names, problems):
    rel = os.path.relpath(path, root)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError:
        return
    for number, line in enumerate(text.split("\n"), 1):
        for name in MD_NAME.findall(line):
            if name not in md_names and name not in EXTERNAL_DOCUMENTS:
                problems.append(f"{rel}:{number}: {name}: no such document in the repository")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    files = list(walk(root))
    md_names = {os.path.basename(p) for p in files if p.endswith(".md")}
    top_folders = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)) and not skipped(d))
    problems = []
    for path in files:
        if path.endswith(".md"):
            check_markdown(root, path, top_folders, md_names, problems)
        if path.endswith(SOURCE_SUFFIXES) or os.path.basename(path) == "meson.build":
            check_md_names(root, path, md_names, problems)
    for p in problems:
        print(p)
    checked = sum(p.endswith(".md") for p in files)
    print(f"{len(problems)} problems in {checked} Markdown files" if problems else f"{checked} Markdown files: every link and path exists")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
