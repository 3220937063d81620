"""The CEL parser's tables, kept in the user's cache: loaded, they parse as built ones do."""

from pathlib import Path
from typing import Any

import lark
import pytest
from celpy.celparser import CELParseError, CELParser

from modelplane.cel import grammar

EXPRESSIONS = [
    'device.attributes["a"].b == "c" && device.capacity["a"].d.isGreaterThan(quantity("1"))',
    "self.replicas > 0 ? self.items.all(x, x.size() < 3u) : -1.5e3 in [1, 2]",
    "has(self.spec.x) || !(b'\\x00' == b'') && {'k': null}['k'] == null",
    # Syntax errors: the same messages and positions either way.
    "1 +",
    "a.b(",
    '"unterminated',
    "[1, 2",
]


def _shape(tree: Any) -> Any:
    if isinstance(tree, lark.Tree):
        meta = None if tree.meta.empty else (tree.meta.line, tree.meta.column, tree.meta.end_pos)
        return (str(tree.data), meta, [_shape(child) for child in tree.children])
    token: lark.Token = tree
    return (token.type, str(token), token.line, token.column, token.start_pos)


def _parse_all(parser: CELParser) -> list[Any]:
    out: list[Any] = []
    for expression in EXPRESSIONS:
        try:
            out.append(_shape(parser.parse(expression)))
        except CELParseError as error:
            out.append((str(error), error.line, error.column))
    return out


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    # celpy's singleton is restored after the test by monkeypatch.
    monkeypatch.setattr(CELParser, "CEL_PARSER", None)
    return tmp_path


def _fresh(monkeypatch: pytest.MonkeyPatch) -> CELParser:
    monkeypatch.setattr(CELParser, "CEL_PARSER", None)
    return grammar.parser()


def test_a_loaded_parser_parses_as_a_built_one(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    CELParser()  # celpy's own construction, no cache involved
    built = _parse_all(CELParser())
    path = grammar.cache_path()
    assert path is not None and path.parent == cache_home / "modelplane"

    _fresh(monkeypatch)  # nothing cached yet: built, then saved
    assert path.is_file()
    loaded = _fresh(monkeypatch)
    assert _parse_all(loaded) == built


def test_a_corrupt_cache_is_built_anew(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    CELParser()
    built = _parse_all(CELParser())
    path = grammar.cache_path()
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a parser")

    assert _parse_all(_fresh(monkeypatch)) == built
    # ...and saved again whole, so the next process loads it.
    assert path.read_bytes() != b"not a parser"
    assert _parse_all(_fresh(monkeypatch)) == built


def test_an_unwritable_cache_is_not_an_error(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    CELParser()
    built = _parse_all(CELParser())
    (cache_home / "modelplane").write_text("a file where the directory would be")

    assert _parse_all(_fresh(monkeypatch)) == built


def test_a_user_with_no_home_directory_parses_uncached(monkeypatch: pytest.MonkeyPatch) -> None:
    # A function pod's user may have neither HOME nor a passwd entry.
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert grammar.cache_path() is None
    parser = _fresh(monkeypatch)
    assert parser.parse("1 + 2") is not None
