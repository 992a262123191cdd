"""The kernels stay readable: no source file in kernels/ over 900 lines and no function over 120.

A function is counted from the first line of its signature (after its template header) to its
closing brace, lambdas and local structs included; member functions are functions of their own.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_FILE_LINES = 900
MAX_FUNCTION_LINES = 120
SOURCES = (".cu", ".cuh", ".hpp", ".cpp", ".h")
_NOT_FUNCTIONS = re.compile(r"^(if|for|while|switch|catch|do|else|try|struct|class|union|enum|namespace|extern)\b")
_COMMENTS_AND_LITERALS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def _blank(match: re.Match[str]) -> str:
    # Keeps the line count: a comment or literal becomes spaces, its newlines stay.
    text = match.group(0)
    return "".join(c if c == "\n" else " " for c in text)


def function_lengths(text: str) -> list[tuple[str, int, int]]:
    """(signature, first line, lines) of every function defined in C++ source `text`."""
    code = _COMMENTS_AND_LITERALS.sub(_blank, text)
    code = re.sub(r"^[ \t]*#[^\n]*", lambda m: " " * len(m.group(0)), code, flags=re.M)  # preprocessor lines
    found = []
    stack: list[tuple[bool, str, int]] = []  # (is a function, signature, first line) per open brace
    head_start, line = 0, 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        if c not in "{};":
            continue
        in_function = any(f for f, _, _ in stack)
        if c == "{":
            head = code[head_start:i]
            signature = " ".join(head.split())
            signature = re.sub(r"^(template\s*<.*?>\s*)+", "", signature)  # one level of <> is enough here
            is_function = (not in_function and ")" in signature and "(" in signature and "=" not in signature.split("(")[0]
                           and not _NOT_FUNCTIONS.match(signature) and not signature.startswith("["))
            # The signature's first line: the head's first non-blank line after a template header.
            sig_pos = head_start + len(head) - len(head.lstrip())
            template = re.match(r"(\s*template\s*<[^{;]*?>\s*)+", code[sig_pos:i])
            if template:
                sig_pos += template.end()
            first = code.count("\n", 0, sig_pos) + 1
            stack.append((is_function, signature[:80], first))
        elif c == "}" and stack:
            is_function, signature, first = stack.pop()
            if is_function:
                found.append((signature, first, line - first + 1))
        head_start = i + 1
    return found


def kernel_sources() -> list[Path]:
    return sorted(p for p in (ROOT / "kernels").rglob("*") if p.suffix in SOURCES)


def test_scanner_counts_functions_members_and_ignores_control_blocks():
    src = """
template <class T>
__device__ int f(int a) {
  if (a) {
    return 1;
  }
  auto g = [&](int b) { return b; };
  return g(a);
}
struct S {
  int m() const { return 1; }
};
"""
    got = {sig.split("(")[0]: (first, n) for sig, first, n in function_lengths(src)}
    assert got["__device__ int f"] == (3, 7)
    assert got["int m"] == (11, 1)
    assert len(got) == 2


def test_no_kernel_file_over_the_limit():
    over = [f"{p.relative_to(ROOT)}: {n}" for p in kernel_sources()
            if (n := p.read_text(errors="replace").count("\n")) > MAX_FILE_LINES]
    assert not over, f"files over {MAX_FILE_LINES} lines (split them by role): {over}"


@pytest.mark.parametrize("path", kernel_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_kernel_function_over_the_limit(path: Path):
    over = [f"line {first}: {sig} ({n} lines)" for sig, first, n in function_lengths(path.read_text(errors="replace"))
            if n > MAX_FUNCTION_LINES]
    assert not over, f"functions over {MAX_FUNCTION_LINES} lines in {path.relative_to(ROOT)}: {over}"
