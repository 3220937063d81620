"""What parsing and checking an expression costs, known before it is parsed.

Parsing is the one part of CEL work the evaluation budget cannot count as it
goes: celpy's Lark parser runs to the end of its input, and its time grows with
the number of tokens and how deeply they nest (every bracket descends through
the grammar's ten precedence levels). So the work is bounded before the parser
ever sees the text, by a scan that runs in the regular-expression engine:

- nesting: brackets (`(`, `[`, `{`) nested deeper than `MAX_LEXICAL_NESTING`
  refuse the expression outright, as cel-go's parser refuses deep recursion;
- cost: `COMPILE_UNITS_PER_TOKEN` units per token, which a scheduling decision
  charges to its CEL budget before it parses or checks the selector, whether or
  not this process has compiled it before. The count depends on the text alone,
  so it is the same on every machine and every call, cold or warm.

`make bench` (`bench hostile`) measures what the parsing a decision can pay for takes.
"""

import re
from dataclasses import dataclass
from typing import Final

MAX_LEXICAL_NESTING: Final = 32
"""Brackets nested deeper than this are refused before parsing; no selector a
person writes comes near it."""
COMPILE_UNITS_PER_TOKEN: Final = 4_000
"""Cost units charged per token for parsing and checking. Parsing and checking a
token takes up to about 350 us on a loaded two-core machine (`bench hostile`), so
the 250 tokens a decision's 1,000,000 units pay for parse in under 100 ms; the
largest example deployment's selectors are 46 tokens."""

_BACKSLASH: Final = "\\\\"  # a regular expression matching one backslash
_Q1: Final = "'"
_Q2: Final = '"'


def _quoted(quote: str) -> str:
    """A one-line string in `quote`: runs of plain characters, escapes between them
    (an unrolled loop, one engine step per run rather than per character)."""
    plain = f"[^{quote}{_BACKSLASH}\\n]*"
    return f"{quote}{plain}(?:{_BACKSLASH}.{plain})*{quote}"


def _triple(quote: str) -> str:
    """A triple-quoted string: runs of plain characters, escapes and lone quotes."""
    plain = f"[^{quote}{_BACKSLASH}]*"
    other = f"(?:{_BACKSLASH}.|{quote}(?!{quote}{quote}))"
    return f"{quote * 3}{plain}(?:{other}{plain})*{quote * 3}"


_STRING_PATTERN: Final = "|".join((_triple(_Q1), _triple(_Q2), _quoted(_Q1), _quoted(_Q2)))
_STRING: Final = re.compile(_STRING_PATTERN, re.DOTALL)
# Strings, numbers, names, two-character operators, and any other character alone:
# one token each. What the parser would refuse is counted all the same.
_TOKEN: Final = re.compile(
    _STRING_PATTERN + r"|\d[\w.]*(?:[eE][+-]?\d+)?|[A-Za-z_]\w*|\|\||&&|==|!=|<=|>=|\S",
    re.DOTALL,
)
_NOT_BRACKET: Final = re.compile(r"[^()\[\]{}]+")
# A bracket pair with no bracket inside: removing every one takes a level away.
_INNERMOST: Final = re.compile(r"[(\[{][)\]}]")


@dataclass(frozen=True, slots=True)
class Lexical:
    """An expression's token count and deepest bracket nesting (counted up to one
    past `MAX_LEXICAL_NESTING`: a deeper count is not needed)."""

    tokens: int
    nesting: int

    @property
    def cost(self) -> int:
        """The cost units parsing and checking it is charged."""
        return self.tokens * COMPILE_UNITS_PER_TOKEN


def scan(expression: str) -> Lexical:
    """Count the tokens and the deepest bracket nesting (brackets in strings aside).

    Every pass runs in the regular-expression engine: one counts the tokens, and
    each further one removes the innermost bracket pairs, a level a pass.
    """
    tokens = len(_TOKEN.findall(expression))
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", expression))
    nesting = 0
    while brackets and nesting <= MAX_LEXICAL_NESTING:
        inner = _INNERMOST.sub("", brackets)
        if inner == brackets:
            # Unbalanced: an opening bracket left open nests all that follows it.
            nesting += sum(brackets.count(b) for b in "([{")
            break
        brackets = inner
        nesting += 1
    return Lexical(tokens, nesting)


def compile_cost(expression: str) -> int:
    """The cost units of parsing and checking `expression` (see the module's docs)."""
    return scan(expression).cost
