"""`make crds`: the pin list, the lookup order, and downloads checked by sha256.

The downloads are served from 127.0.0.1 (this machine reaches no upstream
repository); what is checked is the logic: every file or none, each matching
its pin, and a clear error naming each file that failed.
"""

import functools
import hashlib
import http.server
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from modelplane_cli.schema import upstream
from modelplane_cli.schema.upstream import (
    DownloadError,
    Pin,
    PinError,
    download,
    read_pins,
    reference_crd_directory,
)

from .yaml_files import document

ROOT = Path(__file__).resolve().parents[2]
PINS = read_pins(ROOT / upstream.PINS_FILE)
RAW = re.compile(
    r"^https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[0-9a-f]{40}/(?:[\w.-]+/)*([\w.-]+)$"
)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_every_pin_is_a_file_at_a_commit() -> None:
    for pin in PINS:
        match = RAW.match(pin.url)
        assert match is not None, pin.url
        assert match.group(1) == pin.file
        assert "@" in pin.version


@pytest.mark.needs_crds
def test_the_crds_in_use_are_the_pinned_bytes() -> None:
    crds = reference_crd_directory()
    assert crds is not None, upstream.missing_crds_message()
    pinned = {pin.file: pin.sha256 for pin in PINS}
    present = sorted(crds.glob("*.yaml"))
    assert present
    for path in present:
        assert path.name in pinned, f"{path} is not in {upstream.PINS_FILE}"
        assert sha(path.read_bytes()) == pinned[path.name], path
    if crds.name == upstream.DOWNLOAD_DIRECTORY:
        assert {p.name for p in present} == set(pinned)


@pytest.mark.needs_crds
def test_every_pinned_file_is_one_crd_named_for_its_group_and_plural() -> None:
    crds = reference_crd_directory()
    assert crds is not None
    for pin in PINS:
        path = crds / pin.file
        if not path.is_file():
            continue
        crd = document(path)
        assert crd["kind"] == "CustomResourceDefinition"
        assert pin.file == f"{crd['spec']['group']}_{crd['spec']['names']['plural']}.yaml"


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.setattr(upstream, "checkout_root", lambda: root)
    monkeypatch.delenv(upstream.ENVIRONMENT, raising=False)
    return root


def test_lookup_prefers_downloaded_then_environment_then_shared(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared" / "crds"
    configured = tmp_path / "elsewhere"
    downloaded = checkout / ".crds"
    assert reference_crd_directory() is None
    assert "make crds" in upstream.missing_crds_message()
    shared.mkdir(parents=True)
    assert reference_crd_directory() == shared
    configured.mkdir()
    monkeypatch.setenv(upstream.ENVIRONMENT, str(configured))
    assert reference_crd_directory() == configured
    downloaded.mkdir()
    assert reference_crd_directory() == downloaded


def test_an_installed_cli_uses_only_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(upstream, "checkout_root", lambda: None)
    monkeypatch.delenv(upstream.ENVIRONMENT, raising=False)
    assert reference_crd_directory() is None
    monkeypatch.setenv(upstream.ENVIRONMENT, str(tmp_path))
    assert reference_crd_directory() == tmp_path


def _root_conftest(config: pytest.Config) -> Any:
    """The checkout's conftest.py as pytest loaded it (its module name depends on the
    import mode and on which other conftests were collected first)."""
    root = Path(__file__).resolve().parents[2] / "conftest.py"
    for plugin in config.pluginmanager.get_plugins():
        where = getattr(plugin, "__file__", None)
        if where is not None and Path(where).resolve() == root:
            return plugin
    raise AssertionError(f"{root} is not loaded")


def test_the_suite_fails_rather_than_skips_without_crds(
    monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config
) -> None:
    conftest = _root_conftest(pytestconfig)
    monkeypatch.setattr(conftest, "reference_crd_directory", lambda: None)
    needing = SimpleNamespace(
        fixturenames=["manifest_validator"], get_closest_marker=lambda _: None
    )
    other = SimpleNamespace(fixturenames=[], get_closest_marker=lambda _: None)
    with pytest.raises(pytest.UsageError, match="1 tests cannot run: no upstream CRDs"):
        conftest.pytest_collection_modifyitems(None, [needing, other])


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No access log on the test's stderr."""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTP server on 127.0.0.1 serving a directory: its base URL and the directory."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # `shutdown` waits for the serving loop's next poll: half a second by default.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def two_pins(base: str, root: Path) -> list[Pin]:
    """Two real upstream CRDs, served as they are and pinned by their sha256."""
    crds = reference_crd_directory()
    assert crds is not None
    pins: list[Pin] = []
    for name in ("keda.sh_scaledobjects.yaml", "kueue.x-k8s.io_localqueues.yaml"):
        shutil.copyfile(crds / name, root / name)
        pins.append(Pin(name, f"{base}/{name}", "test", sha((crds / name).read_bytes())))
    return pins


@pytest.mark.needs_crds
def test_download_fetches_each_pin_and_keeps_what_matches(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    pins = two_pins(*served)
    into = tmp_path / ".crds"
    assert download(pins, into) == 2
    assert sorted(p.name for p in into.iterdir()) == sorted(p.file for p in pins)
    for pin in pins:
        assert sha((into / pin.file).read_bytes()) == pin.sha256
    # Present and matching: nothing is fetched again, even with the server gone.
    shutil.rmtree(served[1])
    assert download(pins, into) == 0


@pytest.mark.needs_crds
def test_a_mismatch_fails_the_whole_download_and_leaves_the_directory(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    base, root = served
    pins = two_pins(base, root)
    into = tmp_path / ".crds"
    into.mkdir()
    (into / "kept.yaml").write_text("what was here before\n")
    (root / pins[1].file).write_text("tampered\n")
    with pytest.raises(DownloadError) as failed:
        download(pins, into)
    message = str(failed.value)
    assert pins[1].file in message
    assert sha(b"tampered\n") in message
    assert pins[1].sha256 in message
    assert pins[0].file not in message
    assert [p.name for p in into.iterdir()] == ["kept.yaml"]
    assert not (tmp_path / ".crds.partial").exists()


@pytest.mark.needs_crds
def test_an_unreachable_file_is_named_with_the_servers_answer(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    base, root = served
    pins = [*two_pins(base, root), Pin("gone.yaml", f"{base}/gone.yaml", "test", "0" * 64)]
    with pytest.raises(
        DownloadError, match=r"gone\.yaml: http://127\.0\.0\.1:\d+/gone\.yaml answered 404"
    ):
        download(pins, tmp_path / ".crds")
    assert not (tmp_path / ".crds").exists()


def test_a_mirror_is_checked_like_a_download(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "a.yaml").write_text("a\n")
    pins = [Pin("a.yaml", "https://example.invalid/a.yaml", "test", sha(b"a\n"))]
    assert download(pins, tmp_path / "into", mirror) == 1
    bad = [Pin("a.yaml", "https://example.invalid/a.yaml", "test", sha(b"b\n"))]
    with pytest.raises(DownloadError, match=r"sha256 of .*a\.yaml is"):
        download(bad, tmp_path / "other", mirror)


def test_make_crds_reports_failure_and_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pins = tmp_path / "pins.yaml"
    pins.write_text(
        yaml.safe_dump(
            [
                {
                    "file": "a.yaml",
                    "url": "http://127.0.0.1:9/a.yaml",
                    "version": "x@1",
                    "sha256": "0" * 64,
                }
            ]
        )
    )
    assert upstream.main(["--pins", str(pins), "--into", str(tmp_path / ".crds")]) == 1
    err = capsys.readouterr().err
    assert "left unchanged" in err
    assert "a.yaml: cannot download http://127.0.0.1:9/a.yaml" in err


@pytest.mark.parametrize(
    ("pins", "problem"),
    [
        ({"file": "a.yaml"}, "expected a list"),
        ([{"file": "a.yaml", "url": "u", "version": "v"}], "exactly file, url, version, sha256"),
        (
            [{"file": "a.yaml", "url": "u", "version": "v", "sha256": "abc"}],
            "not 64 lower-case hex",
        ),
        ([{"file": "../a.yaml", "url": "u", "version": "v", "sha256": "0" * 64}], "plain .yaml"),
        (
            [{"file": "a.yaml", "url": "u", "version": "v", "sha256": "0" * 64}] * 2,
            "pinned twice",
        ),
    ],
)
def test_malformed_pins_are_refused(tmp_path: Path, pins: object, problem: str) -> None:
    path = tmp_path / "pins.yaml"
    path.write_text(yaml.safe_dump(pins))
    with pytest.raises(PinError, match=re.escape(problem)):
        read_pins(path)
