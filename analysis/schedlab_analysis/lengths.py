"""The ``lengths`` axis of our benchmark names (a ragged batch), read as the C++ harness reads it
(``common/harness/axes.hpp``, ``parse_lengths``): lengths and named distributions joined by '+'.

  1+65536+300                 the lengths themselves
  4x1024+1x65536              COUNTxLENGTH repeats a length
  uniform:B:MIN-MAX           B lengths drawn uniformly from [MIN, MAX]
  one_long:B:LONG:MIN-MAX     LONG, then B-1 drawn from [MIN, MAX]
  lognormal:B:MEDIAN:SIGMA:MIN-MAX
                              B lengths MEDIAN * exp(SIGMA * z), z standard normal (Box-Muller),
                              rounded half up and clamped to [MIN, MAX]

Every distribution draws from splitmix64 seeded with 1, exactly as the C++ does, so a peer given
a benchmark name runs the very lengths our kernel ran (both sides pin the same draws in their
tests: common/tests/test_axes.cpp, analysis/tests/test_lengths.py).
"""
from __future__ import annotations

import math

MAX_BATCH = 1 << 16  # harness::kMaxBatch
_MASK = (1 << 64) - 1
_SEED = 1


class LengthsError(ValueError):
    """A malformed ``lengths`` value, named with the part at fault."""


class _SplitMix64:
    def __init__(self, state: int = _SEED):
        self.state = state

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def in_range(self, lo: int, hi: int) -> int:
        return lo + self.next() % (hi - lo + 1)


def _whole(spec: str, text: str, min_value: int = 1) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) >= 1 << 31:
        raise LengthsError(f"lengths {spec!r}: {text!r} is not a whole number that fits in an int")
    value = int(text)
    if value < min_value:
        raise LengthsError(f"lengths {spec!r}: {text!r} is below {min_value}")
    return value


def _range(spec: str, text: str) -> tuple[int, int]:
    parts = text.split("-")
    if len(parts) != 2:
        raise LengthsError(f"lengths {spec!r}: expected a range MIN-MAX, got {text!r}")
    lo, hi = _whole(spec, parts[0]), _whole(spec, parts[1])
    if lo > hi:
        raise LengthsError(f"lengths {spec!r}: range {text!r} has MIN > MAX")
    return lo, hi


_FORMS = {"uniform": "uniform:BATCH:MIN-MAX", "one_long": "one_long:BATCH:LONG:MIN-MAX",
          "lognormal": "lognormal:BATCH:MEDIAN:SIGMA:MIN-MAX"}


def _draw(spec: str, item: str) -> list[int]:
    fields = item.split(":")
    kind = fields[0]
    if kind not in _FORMS:
        raise LengthsError(f"lengths {spec!r}: unknown distribution {kind!r} (expected "
                           + ", ".join(_FORMS.values()) + ", or lengths joined by '+')")
    if len(fields) != _FORMS[kind].count(":") + 1:
        raise LengthsError(f"lengths {spec!r}: expected {_FORMS[kind]}")
    batch = _whole(spec, fields[1])
    lo, hi = _range(spec, fields[-1])
    gen = _SplitMix64()
    if kind == "lognormal":
        median = _whole(spec, fields[2])
        try:
            sigma = float(fields[3])
        except ValueError:
            sigma = math.nan
        if not 0 < sigma <= 10:
            raise LengthsError(f"lengths {spec!r}: SIGMA {fields[3]!r} is not a number in (0, 10]")
        out = []
        for _ in range(batch):
            u1 = ((gen.next() >> 11) + 1) * 2.0 ** -53
            u2 = (gen.next() >> 11) * 2.0 ** -53
            z = math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)
            out.append(int(min(max(math.floor(median * math.exp(sigma * z) + 0.5), lo), hi)))
        return out
    out = [_whole(spec, fields[2])] if kind == "one_long" else []
    while len(out) < batch:
        out.append(gen.in_range(lo, hi))
    return out


def parse_lengths(spec: str) -> list[int]:
    """The sequence lengths of one ``lengths`` value, as the C++ harness draws them."""
    out: list[int] = []
    for item in spec.split("+"):
        if ":" in item or (item and item[0].isalpha()):
            out += _draw(spec, item)
        else:
            count, x, length = item.partition("x")
            out += [_whole(spec, length if x else count)] * (_whole(spec, count) if x else 1)
        if len(out) > MAX_BATCH:
            raise LengthsError(f"lengths {spec!r}: {len(out)} sequences, more than {MAX_BATCH}")
    return out
