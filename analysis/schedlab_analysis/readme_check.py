"""The README prose rule: outside generated sections, a README states no measured figure and
calls no direction (README_RULE.md at the top of the working trees that share it; summarised here).

A figure is a number with a unit of time, rate, ratio or share: ``%``, ``x`` or ``×`` right
after a number (``1.15x``), ``ns`` ``us`` ``µs`` ``ms`` ``s``, ``TB/s`` ``GB/s`` ``TFLOP/s``
``TFLOPS``. Sizes and design facts (``64 KiB``, ``head dim 128``, ``16 warps``) are not figures.
A direction is one of the words of ``DIRECTIONS`` (whole words, any case).

Not checked: generated sections, fenced code blocks, inline code spans, link targets, the text
under a heading that names a published claim, a hypothesis or a prediction (quotes of a cited
source, or what was expected), LOG.md files, and a line that ends with ``NOT_A_MEASUREMENT``.
Such figures and directions come from ``schedlab_analysis.readme``'s generated text instead, so
that they cannot drift from the tables they describe.

    python -m schedlab_analysis.readme_check [FILES]   # exit 1 listing file:line: words
(``python -m schedlab_analysis.readme --check`` runs this too.)
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .readme import BEGIN, END, REPO

NOT_A_MEASUREMENT = "<!-- not a measurement -->"
# Headings whose text is a quote of a cited source or what was expected before measuring.
EXEMPT_HEADINGS = re.compile(r"published claim|hypothesis|prediction", re.I)
LOG_NAME = "LOG.md"

# A number not glued to a name before it (bf16, sm_90a, H200 hold digits but are names).
_NUMBER = r"(?<![\w.])[+\-−]?\d+(?:[.,]\d+)*"
FIGURE = re.compile(
    _NUMBER + r"(?:"
    r"\s?%"                                   # a share
    r"|[x×](?![\w×])"                         # a ratio: 1.15x (not 2x2, 31x1024, a ragged length)
    r"|\s?(?:ns|us|µs|μs|ms|s)(?![\w/])"     # a time
    r"|\s?(?:TB/s|GB/s|TFLOP/s|TFLOPS)(?!\w)"  # a rate
    r")")
DIRECTIONS = ("faster", "slower", "ahead", "behind", "speedups?", "slowdowns?", r"no\s+difference",
              r"level\s+with", "outperform(?:s|ed|ing)?", "regress(?:ion|ions|ed|es|ing)?")
DIRECTION = re.compile(r"\b(?:" + "|".join(DIRECTIONS) + r")\b", re.I)

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)((?:(?!\n[ \t]*\n).)+?)(?<!`)\1(?!`)", re.S)
_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)|<https?://[^>\s]+>")
# Where the prose check looks by default: every README.md outside these folders.


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    words: tuple[str, ...]
    text: str

    def __str__(self) -> str:
        shown = os.path.relpath(self.path) if self.path.is_absolute() else str(self.path)
        return f"{shown}:{self.line}: {', '.join(repr(w) for w in self.words)}: {self.text.strip()}"


def _blank(text: str, start: int, end: int) -> str:
    """``text`` with [start, end) replaced by spaces, newlines kept (line numbers stay)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def checked_text(text: str) -> str:
    """``text`` with every exempt part blanked out: what the rule reads, line for line."""
    lines = text.split("\n")
    out = []
    fence = ""            # the open fence's marker, empty outside a fenced block
    generated = False
    exempt_level = 0      # the level of the exempting heading we are under, 0 if none
    for line in lines:
        keep = True
        m = _FENCE.match(line)
        if fence:
            keep = False
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
        elif generated:
            keep = False
            if END in line:
                generated = False
        elif m:
            fence, keep = m.group(1), False
        elif BEGIN.search(line):
            generated, keep = END not in line[BEGIN.search(line).end():], False
        else:
            h = _HEADING.match(line)
            if h:
                level = len(h.group(1))
                if exempt_level and level <= exempt_level:
                    exempt_level = 0
                if not exempt_level and EXEMPT_HEADINGS.search(line):
                    exempt_level = level
            if exempt_level or line.rstrip().endswith(NOT_A_MEASUREMENT):
                keep = False
        out.append(line if keep else "")
    checked = "\n".join(out)
    for pattern in (_CODE_SPAN, _LINK_TARGET):
        for m in reversed(list(pattern.finditer(checked))):
            checked = _blank(checked, m.start(), m.end())
    return checked


def check_text(text: str, path: Path = Path("README.md")) -> list[Violation]:
    originals = text.split("\n")
    out = []
    for number, line in enumerate(checked_text(text).split("\n"), start=1):
        words = [m.group(0) for m in FIGURE.finditer(line)] + [m.group(0) for m in DIRECTION.finditer(line)]
        if words:
            out.append(Violation(path, number, tuple(words), originals[number - 1]))
    return out


def check_file(path: Path) -> list[Violation]:
    if path.name == LOG_NAME:
        return []
    return check_text(path.read_text(encoding="utf-8"), path)


# The READMEs that report measurements: the project's, each experiment's and each family's.
# (analysis/README.md is the method's reference: it names the verdicts to define them.)
REPORTS = ("README.md", "experiments/*/README.md", "kernels/*/README.md")


def readmes(root: Path) -> list[Path]:
    """Every report README under ``root`` (REPORTS)."""
    return sorted(p for pattern in REPORTS for p in root.glob(pattern) if p.is_file())


def check(paths: list[Path]) -> list[Violation]:
    return [v for p in paths for v in check_file(p)]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    violations = check([Path(a) for a in args] or readmes(REPO))
    for v in violations:
        print(v)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
